import { expect } from 'chai';
import { workerCheckpointsCollection } from '../../workers/reactor.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { startTestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Worker processes of different roles follow the log each from a checkpoint of its own (issue
 * 34): with one shared, a process of the injector alone that saved its checkpoint would make a
 * process of the evaluator alone, started later, skip the attaches in between.
 */
describe('Runtime: a reactor checkpoint per set of roles', function () {
  this.timeout(60_000);

  it('keeps `reactor` for a process of every role, and a checkpoint of its own for one of some roles', async () => {
    const dir = makeTempDir();
    const environment = { DMS_QUEUE_PREFIX: uniqueName('reactors') };
    const idsOf = async (server: Awaited<ReturnType<typeof startTestServer>>) =>
      (await server.runtime.readStore.collection(workerCheckpointsCollection).find({}).toArray()).map(
        (document) => document._id,
      );
    let server = await startTestServer({ dataDir: dir.path, environment, roles: { workers: true } });
    try {
      // A write, so that the reactor has something to move past and save.
      expect((await server.root('POST', `/scopes/root/${uniqueName('s')}`)).status).to.equal(201);
      await eventually(async () => (await idsOf(server)).includes('reactor'), 20_000, 'the reactor checkpoint');
      await server.runtime.stop();
      server = await startTestServer({
        dataDir: dir.path,
        environment,
        roles: { workers: true, daemonRoles: ['judge-injector'] },
      });
      expect((await server.root('POST', `/scopes/root/${uniqueName('s')}`)).status).to.equal(201);
      await eventually(
        async () => (await idsOf(server)).some((id) => id.startsWith('reactor-')),
        20_000,
        "the injector's own checkpoint",
      );
    } finally {
      await server.runtime.stop();
      dir.dispose();
    }
  });
});
