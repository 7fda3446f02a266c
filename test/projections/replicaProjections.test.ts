import { projectEvents } from '../support/projectionHarness.ts';
import { expect } from 'chai';
import { didStreamName, type DidEvent } from '../../domain/did/did.ts';
import type { DidStreamEvent, ReplicaEvent, ReplicaState } from '../../domain/replica/replica.ts';
import { DEFAULT_RSE_PROPERTIES, rseStreamName, type RseEvent } from '../../domain/rse/rse.ts';
import { badReplicasCollection, type BadReplicaDocument } from '../../projections/replica/badReplicasProjection.ts';
import { datasetReplicasCollection, type DatasetReplicaDocument } from '../../projections/replica/datasetReplicas.ts';
import { replicasCollection, type ReplicaDocument } from '../../projections/replica/replicaDocuments.ts';
import { rsesCollection, type RseDocument } from '../../projections/rse/rsesProjection.ts';
import { AT } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';

const RSE = { rse: 'SITE_DISK', rseId: 'a'.repeat(32) };
const rseCreated: RseEvent = {
  type: 'RseCreated',
  data: {
    ...RSE,
    createdAt: AT,
    properties: DEFAULT_RSE_PROPERTIES,
  },
};

/** given(events).then(read models), through the real runner in batches of two, optionally twice. */
const given = (events: (DidStreamEvent | RseEvent)[], options: { twice?: boolean } = {}) =>
  projectEvents(
    'replica-projections-',
    events.map((event) => {
      const data = event.data as { scope?: string; name?: string; rse: string };
      return {
        stream: event.type.startsWith('Rse') ? rseStreamName(data.rse) : didStreamName(data.scope!, data.name!),
        type: event.type,
        data: event.data,
      };
    }),
    async (read) => ({
      replicas: await read<ReplicaDocument>(replicasCollection),
      bad: await read<BadReplicaDocument>(badReplicasCollection),
      datasets: await read<DatasetReplicaDocument>(datasetReplicasCollection),
      rses: await read<RseDocument>(rsesCollection),
    }),
    options,
  );

const added = (name: string, state: ReplicaState = 'AVAILABLE', bytes = 100): ReplicaEvent => ({
  type: 'ReplicaAdded',
  data: {
    scope: 'user.jdoe',
    name,
    ...RSE,
    bytes,
    md5: null,
    adler32: '0cc737eb',
    path: null,
    state,
    tombstone: null,
    lock: null,
    addedAt: AT,
  },
});
const changed = (name: string, previousState: ReplicaState, state: ReplicaState, recovered = false): ReplicaEvent => ({
  type: 'ReplicaStateChanged',
  data: {
    scope: 'user.jdoe',
    name,
    ...RSE,
    previousState,
    state,
    tombstone: null,
    recovered,
    locks: {},
    requestId: null,
    requestStream: null,
    changedAt: AT,
  },
});
const declaredBad = (name: string): ReplicaEvent => ({
  type: 'ReplicaDeclaredBad',
  data: {
    scope: 'user.jdoe',
    name,
    ...RSE,
    previousState: 'AVAILABLE',
    bytes: 100,
    reason: 'lost',
    account: 'root',
    declaredAt: AT,
  },
});
const attached = (name: string, children: string[]): DidEvent => ({
  type: 'DidsAttached',
  data: {
    scope: 'user.jdoe',
    name,
    didType: 'DATASET',
    children: children.map((child) => fileEntry(child)),
    totals: { length: children.length, bytes: 100, events: 0 },
    attachedAt: AT,
  },
});

const history = [
  rseCreated,
  created('f1', 'FILE'),
  added('f1'),
  created('f2', 'FILE'),
  created('ds', 'DATASET'),
  attached('ds', ['f1', 'f2']),
  added('f2', 'COPYING', 50),
  declaredBad('f1'),
  changed('f1', 'BAD', 'AVAILABLE', true),
  changed('f2', 'COPYING', 'AVAILABLE'),
];

describe('Replica projections', () => {
  it('keep one document per replica, the bad-replica history, dataset replicas and the RSE counter', async () => {
    const { replicas, bad, datasets, rses } = await given(history);
    expect(replicas.map((replica) => [replica.name, replica.state, replica.bytes])).to.deep.equal([
      ['f1', 'AVAILABLE', 100],
      ['f2', 'AVAILABLE', 50],
    ]);
    expect(bad.map((row) => [row.name, row.state, row.reason])).to.deep.equal([['f1', 'RECOVERED', 'lost']]);
    expect(
      datasets.map(({ name, replicas: count, available_length, available_bytes }) => ({
        name,
        count,
        available_length,
        available_bytes,
      })),
    ).to.deep.equal([{ name: 'ds', count: 2, available_length: 2, available_bytes: 150 }]);
    expect(rses[0]!.usage.rucio).to.deep.include({ used: 150, files: 2 });
  });

  it('follow detaches: a dataset row without replicas left disappears', async () => {
    const detached: DidEvent = {
      type: 'DidsDetached',
      data: {
        scope: 'user.jdoe',
        name: 'ds',
        didType: 'DATASET',
        children: [fileEntry('f1'), fileEntry('f2')],
        totals: { length: 0, bytes: 0, events: 0 },
        detachedAt: AT,
      },
    };
    expect((await given([...history, detached])).datasets).to.deep.equal([]);
  });

  it('converge to the same documents when every event is delivered twice', async () => {
    const strip = (documents: object[]) => documents.map(({ _pos, ...rest }: { _pos?: number }) => rest);
    const once = await given(history);
    const twice = await given(history, { twice: true });
    for (const key of ['replicas', 'bad', 'datasets'] as const)
      expect(strip(twice[key])).to.deep.equal(strip(once[key]));
    expect(twice.rses[0]!.usage).to.deep.equal(once.rses[0]!.usage);
  });
});
