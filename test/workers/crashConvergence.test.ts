import { expect } from 'chai';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { allProjections } from '../../projections/index.ts';
import { projectionReports, requestProjectionRebuild } from '../../projections/runtime/projectionStatus.ts';
import { eventually } from '../support/eventually.ts';
import { answered, killableServer, type RootCall } from '../support/killableServer.ts';
import { expectReadModelsEqualRebuild, storesOf } from '../support/readModelRebuild.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * `kill -9` in the middle of long work, then a restart on the same data (issue 22): the work
 * finishes, and every read model equals the one a projector makes from the events alone.
 *
 * The container's size is DMS_CRASH_CONTAINER_FILES (default 10 000, in datasets of 1 000: the
 * injector writes 5 000 locks per atomic step, so two steps, and the kill comes once the first is
 * written; the 100 000 runs by hand: DMS_CRASH_CONTAINER_FILES=100000 npx mocha
 * test/workers/crashConvergence.test.ts). The rebuild reads the log of the same container.
 */
const FILES = Number(process.env.DMS_CRASH_CONTAINER_FILES ?? 10_000);
const DATASETS = Math.max(1, Math.ceil(FILES / 1000));
/** Bounds of the waits, growing with the container (they bound a hang, never measure). */
const WAIT_MS = Math.max(300_000, FILES * 20);
const JUDGE = ['judge-injector', 'judge-evaluator', 'judge-repairer', 'judge-cleaner'];

const DOMAINS = {
  lan: { read: 1, write: 1, delete: 1 },
  wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
};

/** A scope, two mock RSEs, and a closed container of closed datasets holding FILES files with a replica on SOURCE. */
const aContainer = async (call: RootCall): Promise<void> => {
  answered(await call('POST', '/scopes/root/crash'), 201);
  for (const rse of ['SOURCE', 'TARGET']) {
    answered(await call('POST', `/rses/${rse}`, { body: {} }), 201);
    answered(
      await call('POST', `/rses/${rse}/protocols/mock`, {
        body: {
          hostname: `${rse.toLowerCase()}.example.org`,
          port: 0,
          prefix: '/data',
          impl: 'rucio.rse.protocols.mock.Default',
          domains: DOMAINS,
        },
      }),
      201,
    );
  }
  const datasets = Array.from({ length: DATASETS }, (_, index) => ({
    scope: 'crash',
    name: `part${index}`,
    type: 'DATASET',
  }));
  answered(
    await call('POST', '/dids', { body: [{ scope: 'crash', name: 'container', type: 'CONTAINER' }, ...datasets] }),
    201,
  );
  for (const [index, dataset] of datasets.entries()) {
    const count = Math.min(1000, FILES - index * 1000);
    const dids = Array.from({ length: count }, (_, offset) => ({
      scope: 'crash',
      name: `${dataset.name}.${offset}`,
      bytes: 1000,
      adler32: '0cc737eb',
    }));
    answered(await call('POST', `/dids/crash/${dataset.name}/dids`, { body: { rse: 'SOURCE', dids } }), 201);
    answered(await call('PUT', `/dids/crash/${dataset.name}/status`, { body: { open: false } }), 200);
  }
  answered(
    await call('POST', '/dids/crash/container/dids', {
      body: { dids: datasets.map(({ scope, name }) => ({ scope, name })) },
    }),
    201,
  );
  answered(await call('PUT', '/dids/crash/container/status', { body: { open: false } }), 200);
};

describe('Crash: kill -9 mid-way through long work converges to a rebuild (issue 22)', function () {
  this.timeout(4 * WAIT_MS);

  it(`finishes an asynchronous rule on a ${FILES}-file container killed during the injector's cycle, equal to a rebuild`, async () => {
    const dir = makeTempDir('crash-injector-');
    // The judge alone: the conveyor would copy with the mock tool and the rule would move on.
    const server = killableServer(dir.path, { roles: JUDGE });
    try {
      let call = await server.start();
      await aContainer(call);
      const created = answered(
        await call('POST', '/rules/', {
          body: {
            dids: [{ scope: 'crash', name: 'container' }],
            copies: 1,
            rse_expression: 'TARGET',
            asynchronous: true,
          },
        }),
        201,
      );
      const [ruleId] = created.json<string[]>();
      // The injector's steps are watched in the event log itself, as they commit (the read models follow later).
      const stores = await storesOf(dir.path);
      let atCrash: number;
      try {
        const locksWritten = async (): Promise<number> =>
          (await stores.eventStore.readStream(ruleStreamName(ruleId!)))
            .filter((event) => event.type === 'RuleLocksCreated')
            .reduce((sum, event) => sum + (event.data as { locks: unknown[] }).locks.length, 0);
        await eventually(async () => (await locksWritten()) > 0, WAIT_MS, "the injector's first step written");
        await server.crash();
        atCrash = await locksWritten();
      } finally {
        await stores.close();
      }
      expect(atCrash, "killed during the injector's cycle").to.be.above(0).and.below(FILES);
      console.log(`      killed with ${atCrash} of ${FILES} locks written`);
      call = await server.start();
      const locks = async (): Promise<number> => {
        const rule = await call('GET', `/rules/${ruleId}`);
        return rule.status === 200 ? rule.json<{ locks_replicating_cnt: number }>().locks_replicating_cnt : 0;
      };
      await eventually(async () => (await locks()) === FILES, WAIT_MS, 'every lock made after the restart');
      const rule = answered(await call('GET', `/rules/${ruleId}`), 200).json<Record<string, unknown>>();
      expect(rule).to.include({ state: 'REPLICATING', locks_ok_cnt: 0, locks_stuck_cnt: 0 });
      await server.stop();
      const readModels = await expectReadModelsEqualRebuild(dir.path, WAIT_MS);
      expect(readModels.rule_locks, 'one lock per file').to.have.length(FILES);
    } finally {
      await server.stop();
      dir.dispose();
    }
  });

  it('finishes a projection rebuild killed half-way, and reads switch to a generation equal to a rebuild', async () => {
    const dir = makeTempDir('crash-rebuild-');
    const server = killableServer(dir.path, { roles: JUDGE });
    try {
      let call = await server.start();
      await aContainer(call);
      const projection = allProjections.find((candidate) => candidate.name === 'dids')!;
      const stores = await storesOf(dir.path);
      const rebuildOf = async () =>
        (await projectionReports(stores.eventStore, stores.readModels.stores, [projection]))[0]!;
      try {
        const request = await requestProjectionRebuild(stores.readModels.stores, projection);
        expect(request.projectorRunning).to.equal(true);
        await eventually(
          async () => {
            const report = await rebuildOf();
            return report.rebuild !== undefined && report.rebuild.checkpoint > 0n;
          },
          60_000,
          'the rebuild under way',
        );
        await server.crash();
        const atCrash = await rebuildOf();
        expect(atCrash.rebuild, 'killed before the rebuild had finished').not.to.equal(undefined);
        console.log(`      killed with the rebuild at position ${atCrash.rebuild!.checkpoint} of ${atCrash.head}`);
        call = await server.start();
        await eventually(
          async () => (await rebuildOf()).generation === request.generation,
          120_000,
          'reads switched to the rebuilt generation',
        );
        answered(await call('GET', '/dids/crash/part0.0'), 200);
      } finally {
        await stores.close();
      }
      await server.stop();
      await expectReadModelsEqualRebuild(dir.path);
    } finally {
      await server.stop();
      dir.dispose();
    }
  });
});
