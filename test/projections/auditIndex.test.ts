import { expect } from 'chai';
import { didStreamName } from '../../domain/did/did.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import {
  auditFeedCollection,
  auditIndexCollection,
  POSITIONS_PER_BUCKET,
  type AuditFeedDocument,
  type AuditIndexDocument,
} from '../../projections/audit/auditIndex.ts';
import { join } from 'node:path';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { feedEvents, subjectEntries, type FeedQuery } from '../../projections/audit/auditQueries.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { newEvent } from '../support/events.ts';
import { allProjections } from '../../projections/index.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { AT } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';
import { projectEvents, type StreamedEvent } from '../support/projectionHarness.ts';

/**
 * given(events on their streams).then(the audit's index): the feed by account and by type; the
 * subjects' buckets, and their entries one by one with the bucket that holds each.
 */
const given = (events: readonly StreamedEvent[], options: { twice?: boolean } = {}) =>
  projectEvents(
    'audit-index-',
    events,
    async (read) => {
      const buckets = await read<AuditIndexDocument>(auditIndexCollection);
      const feed = (await read<AuditFeedDocument>(auditFeedCollection)).map(({ _id, account, type, at }) => ({
        id: _id,
        position: Number(_id),
        account,
        type,
        at,
      }));
      return {
        byAccount: [...feed].sort((a, b) => a.account.localeCompare(b.account) || a.position - b.position),
        buckets,
        index: buckets.flatMap((bucket) =>
          bucket.entries.map(([position, type, at]) => ({
            bucket: bucket._id,
            subject: bucket.subject,
            position,
            type,
            at,
          })),
        ),
      };
    },
    options,
  );

const onDid = (event: { type: string; data: object }): StreamedEvent => {
  const { scope, name } = event.data as { scope: string; name: string };
  return { stream: didStreamName(scope, name), type: event.type, data: event.data };
};

const replicaAdded = (name: string, rse: string): StreamedEvent =>
  onDid({
    type: 'ReplicaAdded',
    data: {
      scope: 'user.jdoe',
      name,
      rse,
      rseId: `${rse}-id`,
      bytes: 100,
      md5: null,
      adler32: '0cc737eb',
      path: null,
      state: 'AVAILABLE',
      tombstone: null,
      addedAt: AT,
    },
  });

const attached = (name: string, children: string[]): StreamedEvent =>
  onDid({
    type: 'DidsAttached',
    data: {
      scope: 'user.jdoe',
      name,
      didType: 'DATASET',
      children: children.map((child) => fileEntry(child)),
      totals: { length: children.length, bytes: 100, events: 10 },
      attachedAt: AT,
    },
  });

const ruleStateChanged = (ruleId: string, name: string): StreamedEvent => ({
  stream: ruleStreamName(ruleId),
  type: 'RuleStateChanged',
  data: {
    ruleId,
    scope: 'user.jdoe',
    name,
    account: 'jdoe',
    previousState: 'REPLICATING',
    state: 'OK',
    error: null,
    counters: { ok: 1, replicating: 0, stuck: 0 },
    stuckAt: null,
    cause: { kind: 'transfer' },
    at: AT,
  },
});

const history = [
  onDid(created('f1', 'FILE')),
  replicaAdded('f1', 'DISK'),
  onDid(created('ds', 'DATASET')),
  attached('ds', ['f1', 'f2']),
  ruleStateChanged('r1', 'ds'),
  {
    stream: 'account-jdoe',
    type: 'AccountEmailChanged',
    data: { account: 'jdoe', email: 'j@example.org', changedAt: AT },
  },
  { stream: 'steps-journal', type: 'StepOpened', data: { stepId: 's1', count: 2, streams: 2 } },
];

describe('The audit index', () => {
  it('lists every domain event once, a document each under its position, with the account that acted and its type; the step machinery is left out', async () => {
    const { byAccount } = await given(history);
    expect(byAccount.map((entry) => [entry.position, entry.type, entry.account])).to.deep.equal([
      [1, 'DidCreated', 'root'],
      [2, 'ReplicaAdded', 'root'],
      [3, 'DidCreated', 'root'],
      [4, 'DidsAttached', 'root'],
      [5, 'RuleStateChanged', 'root'],
      [6, 'AccountEmailChanged', 'root'],
    ]);
    expect(byAccount[0]!.id).to.equal(`${'0'.repeat(19)}1`);
    expect(byAccount[0]!.at).to.be.a('string');
  });

  it('reads the feed buckets of its third version, by account and by type, while the new version is rebuilt', async () => {
    const dir = makeTempDir('audit-feed-v3-');
    const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    try {
      for (const name of ['a', 'b', 'c'])
        await eventStore.appendToStream(`account-${name}`, [
          newEvent('AccountEmailChanged', { account: name, email: `${name}@example.org`, changedAt: AT }),
        ]);
      const readModels = new ReadModels(readStore, allProjections);
      const first = `${'0'.repeat(20)}`;
      await readModels.collection(auditFeedCollection).insertOne({
        _id: `account:root ${first}`,
        key: 'account:root',
        entries: [
          [1, 'AccountEmailChanged', AT],
          [2, 'AccountEmailChanged', AT],
          [3, 'AccountEmailChanged', AT],
        ],
      });
      await readModels
        .collection(auditFeedCollection)
        .insertOne({ _id: `type:AccountEmailChanged ${first}`, key: 'type:AccountEmailChanged', entries: [[3, AT]] });
      const positions = async (query: FeedQuery) => {
        const found: bigint[] = [];
        for await (const event of feedEvents(readModels, eventStore, query)) found.push(event.position);
        return found;
      };
      expect(await positions({ account: 'root', since: { position: 2n } })).to.deep.equal([2n, 3n]);
      expect(await positions({ types: ['AccountEmailChanged'] })).to.deep.equal([3n]);
    } finally {
      await eventStore.close();
      await readStore.close();
      dir.dispose();
    }
  });

  it('indexes each event under the DIDs, rules and RSEs it concerns besides the one whose stream holds it: an attach under each child', async () => {
    const { index } = await given(history);
    const bySubject = (subject: string) =>
      index.filter((entry) => entry.subject === subject).map((entry) => [entry.position, entry.type]);
    expect(bySubject('did:user.jdoe:f1')).to.deep.equal([[4, 'DidsAttached']]);
    expect(bySubject('did:user.jdoe:f2')).to.deep.equal([[4, 'DidsAttached']]);
    expect(bySubject('did:user.jdoe:ds')).to.deep.equal([[5, 'RuleStateChanged']]);
    expect(bySubject('rse:DISK')).to.deep.equal([[2, 'ReplicaAdded']]);
    expect(bySubject('rule:r1')).to.deep.equal([]);
    expect(index.find((entry) => entry.subject === 'did:user.jdoe:ds')?.bucket).to.equal(
      'did:user.jdoe:ds 00000000000000000000',
    );
    expect(index).to.have.length(4);
  });

  it("indexes a source declared suspicious by a failed transfer under the rule whose copy failed, and one a person declared under its RSE alone (its DID's history reads its own stream)", async () => {
    const declared = (name: string, transfer?: { requestId: string; ruleId: string }) =>
      onDid({
        type: 'ReplicaDeclaredSuspicious',
        data: {
          scope: 'user.jdoe',
          name,
          rse: 'DISK',
          rseId: 'a'.repeat(32),
          bytes: 1,
          reason: 'checksum mismatch',
          account: 'root',
          declaredAt: AT,
          ...(transfer ? { transfer } : {}),
        },
      });
    const { index } = await given([declared('f1', { requestId: 'q1', ruleId: 'r1' }), declared('f2')]);
    expect(index.map((entry) => [entry.subject, entry.position])).to.deep.equal([
      ['rse:DISK', 1],
      ['rse:DISK', 2],
      ['rule:r1', 1],
    ]);
  });

  it(`keeps a subject's entries in buckets of ${POSITIONS_PER_BUCKET} positions, in order, one document per subject and bucket`, async () => {
    const files = Array.from({ length: POSITIONS_PER_BUCKET + 20 }, (_, index) => `f${index}`);
    const { buckets } = await given(files.map((file) => replicaAdded(file, 'DISK')));
    const disk = buckets.filter((bucket) => bucket.subject === 'rse:DISK');
    expect(disk.map((bucket) => bucket._id)).to.deep.equal([
      `rse:DISK ${'0'.repeat(20)}`,
      `rse:DISK ${String(POSITIONS_PER_BUCKET).padStart(20, '0')}`,
    ]);
    expect(disk.flatMap((bucket) => bucket.entries.map(([position]) => position))).to.deep.equal(
      files.map((_, index) => index + 1),
    );
    expect(disk[0]!.entries).to.have.length(POSITIONS_PER_BUCKET - 1);
  });

  it('comes out the same when every event is delivered twice', async () => {
    const once = await given(history);
    const twice = await given(history, { twice: true });
    const strip = (documents: readonly { at: string }[]) => documents.map(({ at: _at, ...rest }) => rest);
    expect(strip(twice.byAccount)).to.deep.equal(strip(once.byAccount));
    expect(strip(twice.index)).to.deep.equal(strip(once.index));
    expect(twice.buckets.map((bucket) => bucket._id)).to.deep.equal(once.buckets.map((bucket) => bucket._id));
  });

  it('reads the documents of its first version, one entry each, while the new version is rebuilt', async () => {
    const dir = makeTempDir('audit-index-v1-');
    const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    try {
      const readModels = new ReadModels(readStore, allProjections);
      const stored = readModels.collection(auditIndexCollection);
      const entry = (position: number) => ({
        _id: `rse:DISK ${String(position).padStart(20, '0')}`,
        subject: 'rse:DISK',
        position,
        type: 'ReplicaAdded',
        at: AT,
        _pos: position,
      });
      for (const document of [
        entry(2),
        entry(7),
        { ...entry(9), _id: `rse:DISKS ${'9'.padStart(20, '0')}`, subject: 'rse:DISKS' },
      ])
        await stored.insertOne(document);
      const read = [];
      for await (const found of subjectEntries(readModels, 'rse:DISK', { since: { position: 3n } })) read.push(found);
      expect(read).to.deep.equal([{ position: 7, type: 'ReplicaAdded', at: AT }]);
    } finally {
      await readStore.close();
      dir.dispose();
    }
  });
});
