import { expect } from 'chai';
import { Queue } from 'bullmq';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { didStreamName } from '../../domain/did/did.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { addReplicas, fileItem, rseWithProtocols } from '../api/replicaSupport.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The reconciler at work (issue 34): a rule waiting for the injector and a dataset waiting for the
 * transmogrifier get their jobs from the log when nothing enqueued them, and again from the read
 * models when Redis lost every job; once the roles run, the work is done.
 */
describe('Roles: the reconciler finds lost work again (issue 34)', function () {
  this.timeout(90_000);
  let server: TestServer;
  const queueOf = (name: string) =>
    new Queue(name, {
      connection: redisConnectionOptions(server.runtime.redisUrl!),
      prefix: server.runtime.services.config.queuePrefix,
    });
  const jobIds = async (name: string): Promise<string[]> => {
    const queue = queueOf(name);
    try {
      return (await queue.getJobs(['waiting', 'delayed', 'active', 'completed'])).map((job) => String(job.id));
    } finally {
      await queue.close();
    }
  };
  /** Every job of a queue gone, as from a Redis that came back empty. */
  const lose = async (name: string) => {
    const queue = queueOf(name);
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  };
  after(async () => server?.stop());

  it('enqueues the jobs of an injection and a new dataset that nobody enqueued, and again once Redis lost them', async () => {
    // Only the reconciler runs: this process's reactor enqueues nothing for the injector or the transmogrifier.
    const dir = makeTempDir();
    const prefix = uniqueName('reconcile');
    const startWith = (daemonRoles: string[]) =>
      startTestServer({
        roles: { workers: true, daemonRoles },
        dataDir: dir.path,
        removeDataDir: dir.dispose,
        environment: { DMS_QUEUE_PREFIX: prefix },
      });
    server = await startWith(['reconciler']);
    expectStatus(await server.root('POST', '/config', { body: { reconciler: { interval: 1, grace: 1 } } }), 201);
    server = await server.restart();
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    await addReplicas(server, a.rse, [fileItem(scope, 'f1')]);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    const [ruleId] = expectStatus(
      await server.root('POST', '/rules/', {
        body: { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, asynchronous: true },
      }),
      201,
    ).json<string[]>();
    const { eventStore } = server.runtime.services.commands;
    const added = (await eventStore.readStream(ruleStreamName(ruleId!))).find((event) => event.type === 'RuleAdded')!;
    const created = (await eventStore.readStream(didStreamName(scope, dataset))).find(
      (event) => event.type === 'DidCreated',
    )!;

    // From the log: the events' own jobs, a few seconds behind it.
    await eventually(async () => (await jobIds('judge-injector')).includes(added.id), 30_000, 'the injection enqueued');
    await eventually(async () => (await jobIds('transmogrifier')).includes(created.id), 30_000, 'the DID enqueued');

    // Redis lost everything: from the read models, named after what they stand for.
    await lose('judge-injector');
    await lose('transmogrifier');
    await eventually(
      async () => (await jobIds('judge-injector')).some((id) => id.startsWith(`reconcile-inject-${ruleId}-`)),
      30_000,
      'the injection enqueued again',
    );
    await eventually(
      async () => (await jobIds('transmogrifier')).some((id) => id.startsWith('reconcile-new-')),
      30_000,
      'the new DID enqueued again',
    );

    // The roles run again: the work is done once.
    await server.runtime.stop();
    server = await startWith(['reconciler', 'judge-injector', 'transmogrifier']);
    await eventually(
      async () => (await server.root('GET', `/rules/${ruleId}`)).json<{ state: string }>().state === 'REPLICATING',
      30_000,
      'the rule injected',
    );
    await eventually(
      async () =>
        !expectStatus(await server.root('GET', '/dids/new?type=dataset'), 200)
          .lines<{ name: string }>()
          .some((did) => did.name === dataset),
      30_000,
      'the dataset no longer new',
    );
    const rule = (await server.root('GET', `/rules/${ruleId}`)).json<{ locks_replicating_cnt: number }>();
    expect(rule.locks_replicating_cnt).to.equal(1);
  });
});
