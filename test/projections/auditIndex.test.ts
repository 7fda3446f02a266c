import { expect } from 'chai';
import { didStreamName } from '../../domain/did/did.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { auditFeedCollection, auditIndexCollection, type AuditFeedDocument, type AuditIndexDocument } from '../../projections/audit/auditIndex.ts';
import { AT } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';
import { projectEvents, type StreamedEvent } from '../support/projectionHarness.ts';

/** given(events on their streams).then(the audit's index): subjects and feed, by position. */
const given = (events: readonly StreamedEvent[], options: { twice?: boolean } = {}) =>
  projectEvents(
    'audit-index-',
    events,
    async (read) => ({
      feed: await read<AuditFeedDocument>(auditFeedCollection),
      index: await read<AuditIndexDocument>(auditIndexCollection),
    }),
    options,
  );

const onDid = (event: { type: string; data: object }): StreamedEvent => {
  const { scope, name } = event.data as { scope: string; name: string };
  return { stream: didStreamName(scope, name), type: event.type, data: event.data };
};

const replicaAdded = (name: string, rse: string): StreamedEvent =>
  onDid({
    type: 'ReplicaAdded',
    data: { scope: 'user.jdoe', name, rse, rseId: `${rse}-id`, bytes: 100, md5: null, adler32: '0cc737eb', path: null, state: 'AVAILABLE', tombstone: null, addedAt: AT },
  });

const attached = (name: string, children: string[]): StreamedEvent =>
  onDid({
    type: 'DidsAttached',
    data: { scope: 'user.jdoe', name, didType: 'DATASET', children: children.map((child) => fileEntry(child)), totals: { length: children.length, bytes: 100, events: 10 }, attachedAt: AT },
  });

const ruleStateChanged = (ruleId: string, name: string): StreamedEvent => ({
  stream: ruleStreamName(ruleId),
  type: 'RuleStateChanged',
  data: { ruleId, scope: 'user.jdoe', name, account: 'jdoe', previousState: 'REPLICATING', state: 'OK', error: null, counters: { ok: 1, replicating: 0, stuck: 0 }, stuckAt: null, cause: { kind: 'transfer' }, at: AT },
});

const history = [
  onDid(created('f1', 'FILE')),
  replicaAdded('f1', 'DISK'),
  onDid(created('ds', 'DATASET')),
  attached('ds', ['f1', 'f2']),
  ruleStateChanged('r1', 'ds'),
  { stream: 'account-jdoe', type: 'AccountEmailChanged', data: { account: 'jdoe', email: 'j@example.org', changedAt: AT } },
  { stream: 'steps-journal', type: 'StepOpened', data: { stepId: 's1', count: 2, streams: 2 } },
];

describe('The audit index', () => {
  it('lists every domain event once in the feed, by position, with who acted and when; the step machinery is left out', async () => {
    const { feed } = await given(history);
    expect(feed.map((entry) => [entry.position, entry.type, entry.stream, entry.account])).to.deep.equal([
      [1, 'DidCreated', 'did-user.jdoe:f1', 'root'],
      [2, 'ReplicaAdded', 'did-user.jdoe:f1', 'root'],
      [3, 'DidCreated', 'did-user.jdoe:ds', 'root'],
      [4, 'DidsAttached', 'did-user.jdoe:ds', 'root'],
      [5, 'RuleStateChanged', 'rule-r1', 'root'],
      [6, 'AccountEmailChanged', 'account-jdoe', 'root'],
    ]);
    expect(feed[0]!._id).to.equal('00000000000000000001');
    expect(feed[0]!.at).to.be.a('string');
  });

  it('indexes each event under the DIDs, rules and RSEs it concerns besides the one whose stream holds it: an attach under each child', async () => {
    const { index } = await given(history);
    const bySubject = (subject: string) => index.filter((entry) => entry.subject === subject).map((entry) => [entry.position, entry.type]);
    expect(bySubject('did:user.jdoe:f1')).to.deep.equal([[4, 'DidsAttached']]);
    expect(bySubject('did:user.jdoe:f2')).to.deep.equal([[4, 'DidsAttached']]);
    expect(bySubject('did:user.jdoe:ds')).to.deep.equal([[5, 'RuleStateChanged']]);
    expect(bySubject('rse:DISK')).to.deep.equal([[2, 'ReplicaAdded']]);
    expect(bySubject('rule:r1')).to.deep.equal([]);
    expect(index.map((entry) => entry._id)).to.include('did:user.jdoe:ds 00000000000000000005');
    expect(index).to.have.length(4);
  });

  it('comes out the same when every event is delivered twice', async () => {
    const once = await given(history);
    const twice = await given(history, { twice: true });
    const strip = (documents: readonly { at: string }[]) => documents.map(({ at: _at, ...rest }) => rest);
    expect(strip(twice.feed)).to.deep.equal(strip(once.feed));
    expect(strip(twice.index)).to.deep.equal(strip(once.index));
  });
});
