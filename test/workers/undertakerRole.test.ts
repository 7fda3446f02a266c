import { expect } from 'chai';
import { startRuntime, type Runtime } from '../../bin/runtime.ts';
import { silentLogger } from '../../infra/logger.ts';
import { RoleStatusStore } from '../../workers/roleStatus.ts';
import { undertakerRole } from '../../workers/did/undertakerRole.ts';
import { eventually } from '../support/eventually.ts';
import { newScope, path } from '../support/dids.ts';
import { createRse } from '../api/rseSupport.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';

/**
 * The undertaker as a scheduled role, end to end: an expired dataset disappears without anyone
 * asking, and the role's last cycle says what it did. Once in `dms serve` (one process), once in
 * a worker process of its own beside an API process.
 */
describe('Role: the undertaker on a schedule (behaviour rule 7)', function () {
  this.timeout(30_000);

  const expiredDataset = async (server: TestServer) => {
    const scope = await newScope(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/lifetime'), { body: { value: -1 } }), 201);
    return scope;
  };
  const everySecond = async (server: TestServer) =>
    expectStatus(await server.root('POST', '/config', { body: { undertaker: { interval: 1 } } }), 201);
  const gone = async (server: TestServer, scope: string) =>
    (await server.root('GET', path(scope, 'ds'))).status === 404;
  const lastCycle = async (runtime: Runtime) => {
    const status = new RoleStatusStore(runtime.redisUrl!, runtime.services.config.queuePrefix);
    try {
      return (await status.statusOf([undertakerRole]))[0]!.lastCycle;
    } finally {
      await status.close();
    }
  };

  it('deletes an expired dataset in dms serve, and reports its cycle', async () => {
    let server = await startTestServer({ roles: { workers: true } });
    try {
      await everySecond(server);
      server = await server.restart();
      const scope = await expiredDataset(server);
      await eventually(() => gone(server, scope), 15_000, 'the expired dataset deleted');
      await eventually(
        async () => ((await lastCycle(server.runtime))?.done ?? 0) >= 1,
        5_000,
        'a cycle that deleted it',
      );
    } finally {
      await server.stop();
    }
  });

  it('leaves an expired dataset with a locked rule, and says why in its cycle', async () => {
    let server = await startTestServer({ roles: { workers: true } });
    try {
      await everySecond(server);
      server = await server.restart();
      const scope = await newScope(server);
      const rse = await createRse(server);
      const body = [{ scope, name: 'ds', type: 'DATASET', rules: [{ copies: 1, rse_expression: rse, locked: true }] }];
      expectStatus(await server.root('POST', '/dids', { body }), 201);
      expectStatus(await server.root('POST', path(scope, 'ds', '/meta/lifetime'), { body: { value: -1 } }), 201);
      const protectedDataset = (reason: string) => reason === 'a locked replication rule protects it';
      await eventually(
        async () =>
          ((await lastCycle(server.runtime))?.skippedSample ?? []).some(
            (skip) => skip.what === `${scope}:ds` && protectedDataset(skip.reason),
          ),
        15_000,
        'a cycle that left it',
      );
      expectStatus(await server.root('GET', path(scope, 'ds')), 200);
    } finally {
      await server.stop();
    }
  });

  it('deletes an expired dataset from a worker process of its own', async () => {
    const server = await startTestServer();
    let worker: Runtime | undefined;
    try {
      await everySecond(server);
      const scope = await expiredDataset(server);
      worker = await startRuntime(
        server.runtime.services.config,
        { api: false, projector: false, workers: true, daemonRoles: ['undertaker'] },
        silentLogger(),
      );
      await worker.daemonsReady;
      await eventually(() => gone(server, scope), 15_000, 'the expired dataset deleted');
      const cycle = await lastCycle(worker);
      expect(cycle?.error ?? null).to.equal(null);
    } finally {
      await worker?.stop();
      await server.stop();
    }
  });
});
