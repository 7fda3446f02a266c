import { expect } from 'chai';
import type { DomainEvent } from '../../domain/areas.ts';
import { messagesOf } from '../../domain/message/message.ts';
import { hopRecords } from '../../domain/request/transferHops.ts';
import { destinationOf, parseRoutes, parseTypePatterns } from '../../domain/message/messageRouting.ts';
import { pythonDate, pythonDurationSeconds } from '../../domain/message/pythonText.ts';
import type { RequestEvent } from '../../domain/request/request.ts';
import { evolveRequestBatch, initialRequestBatch } from '../../domain/request/requestBatch.ts';
import { requestsQueued, transferLink, transferRequest } from '../support/requestSpec.ts';
import { created } from '../support/didEvents.ts';

/**
 * The messages of Rucio's `messages` table as the event log gives them (domain/message/): given
 * the events before (for transfers, the batch's stream), when an event, then the messages with
 * Rucio's event types and payload fields (rucio/core/did.py, request.py, transfer.py, rule.py and
 * the reaper).
 */

const AT = '2026-11-22T10:00:00.250Z';
const envelope = { account: 'jdoe', at: AT };

/** given(request events).when(event).then(messages): the batch comes only from the given events. */
const given = (before: RequestEvent[] = []) => ({
  when: (event: DomainEvent) => ({
    then: (expected: { eventType: string; payload: Record<string, unknown> }[]) =>
      expect(
        messagesOf(event, envelope, { requestsBefore: before.reduce(evolveRequestBatch, initialRequestBatch()) }),
      ).to.deep.equal(expected.map((message) => ({ ...message, createdAt: AT }))),
  }),
});

const record = transferRequest({ attributes: { dsScope: 'user.jdoe', dsName: 'ds1' } });
const queued = requestsQueued([record]);
const submitting = (transfertool: string): RequestEvent => ({
  type: 'RequestSubmitting',
  data: {
    requests: [
      {
        requestId: 'r1',
        sources: [
          { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src:1094/data/f1' },
          { rseId: 'other-id', rse: 'OTHER', ranking: 0, pfn: 'davs://other:443/data/f1' },
        ],
        destUrl: 'root://dest:1094/data/f1',
        transfertool,
      },
    ],
    submittingAt: '2026-11-22T09:30:00.000Z',
  },
});
const submitted = (host: string): RequestEvent => ({
  type: 'RequestSubmitted',
  data: {
    requests: [{ requestId: 'r1', externalId: 'job-1', externalHost: host }],
    submittedAt: '2026-11-22T09:31:00.000Z',
  },
});
const link = transferLink({ sourceRseId: 'other-id', sourceRse: 'OTHER' });
/** What every transfer outcome message says of the request r1. */
const outcomeFields = {
  activity: 'User Subscriptions',
  'request-id': 'r1',
  'checksum-adler': '0cc737eb',
  'checksum-md5': null,
  'file-size': 100,
  bytes: 100,
  guid: null,
  'previous-request-id': null,
  protocol: 'root',
  scope: 'user.jdoe',
  name: 'f1',
  dataset: 'ds1',
  datasetScope: 'user.jdoe',
  'src-type': null,
  'dst-type': null,
  'dst-rse': 'DEST',
  'dst-url': 'root://dest:1094/data/f1',
  'transfer-id': 'job-1',
  'transfer-link': null,
  created_at: '2026-11-22 09:00:00',
  submitted_at: '2026-11-22 09:31:00',
  'tool-id': 'rucio-conveyor',
  account: 'jdoe',
  datatype: null,
};

describe('Messages: what the event log gives Rucio’s hermes', () => {
  describe('DIDs (rucio/core/did.py)', () => {
    it('gives CREATE_DTS for a new dataset, with the acting account and the expiry as Python prints it', () => {
      given()
        .when(created('ds1', 'DATASET', { account: 'owner', createdAt: AT, expiredAt: '2026-12-01T00:00:00.000Z' }))
        .then([
          {
            eventType: 'CREATE_DTS',
            payload: { account: 'jdoe', scope: 'user.jdoe', name: 'ds1', expired_at: '2026-12-01 00:00:00' },
          },
        ]);
    });

    it('gives nothing for a new file', () => {
      given()
        .when({
          type: 'DidCreated',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            didType: 'FILE',
            account: 'jdoe',
            createdAt: AT,
            expiredAt: null,
            monotonic: false,
            isNew: null,
            bytes: 1,
            adler32: null,
            md5: null,
            guid: null,
            events: null,
            replicas: [],
          },
        })
        .then([]);
    });

    it('gives REGISTER_CNT per collection attached to a container, and nothing for files attached to a dataset', () => {
      const child = (name: string, didType: 'DATASET' | 'CONTAINER' | 'FILE') => ({
        scope: 'user.jdoe',
        name,
        didType,
        bytes: null,
        adler32: null,
        md5: null,
        guid: null,
        events: null,
      });
      const totals = { length: 2, bytes: null, events: null };
      given()
        .when({
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'cnt',
            didType: 'CONTAINER',
            children: [child('ds1', 'DATASET'), child('sub', 'CONTAINER')],
            totals,
            attachedAt: AT,
          },
        })
        .then(
          [
            ['ds1', 'DATASET'],
            ['sub', 'CONTAINER'],
          ].map(([childname, childtype]) => ({
            eventType: 'REGISTER_CNT',
            payload: {
              account: 'jdoe',
              scope: 'user.jdoe',
              name: 'cnt',
              childscope: 'user.jdoe',
              childname,
              childtype,
            },
          })),
        );
      given()
        .when({
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'ds1',
            didType: 'DATASET',
            children: [child('f1', 'FILE')],
            totals,
            attachedAt: AT,
          },
        })
        .then([]);
    });

    it('gives ERASE_CNT then DETACH per child detached from a container, with the types as Python prints the enum', () => {
      given()
        .when({
          type: 'DidsDetached',
          data: {
            scope: 'user.jdoe',
            name: 'cnt',
            didType: 'CONTAINER',
            children: [
              {
                scope: 'user.jdoe',
                name: 'ds1',
                didType: 'DATASET',
                bytes: null,
                adler32: null,
                md5: null,
                guid: null,
                events: null,
              },
            ],
            totals: { length: 0, bytes: null, events: null },
            detachedAt: AT,
          },
        })
        .then([
          {
            eventType: 'ERASE_CNT',
            payload: {
              scope: 'user.jdoe',
              name: 'cnt',
              childscope: 'user.jdoe',
              childname: 'ds1',
              childtype: 'DATASET',
            },
          },
          {
            eventType: 'DETACH',
            payload: {
              scope: 'user.jdoe',
              name: 'cnt',
              did_type: 'DIDType.CONTAINER',
              child_scope: 'user.jdoe',
              child_name: 'ds1',
              child_type: 'DIDType.DATASET',
            },
          },
        ]);
    });

    it('gives CLOSE with the totals, and OPEN', () => {
      given()
        .when({
          type: 'DidClosed',
          data: { scope: 'user.jdoe', name: 'ds1', totals: { length: 3, bytes: 300, events: null }, closedAt: AT },
        })
        .then([
          { eventType: 'CLOSE', payload: { scope: 'user.jdoe', name: 'ds1', bytes: 300, length: 3, events: null } },
        ]);
      given()
        .when({ type: 'DidReopened', data: { scope: 'user.jdoe', name: 'ds1', reopenedAt: AT } })
        .then([{ eventType: 'OPEN', payload: { scope: 'user.jdoe', name: 'ds1' } }]);
    });

    it('gives ERASE for a collection the undertaker deletes, with its account', () => {
      given()
        .when({
          type: 'DidErased',
          data: { scope: 'user.jdoe', name: 'cnt', didType: 'CONTAINER', children: [], erasedAt: AT },
        })
        .then([{ eventType: 'ERASE', payload: { account: 'jdoe', scope: 'user.jdoe', name: 'cnt' } }]);
    });

    it('gives ERASE as root for a dataset the reaper’s cleanup deletes, and nothing for its containers', () => {
      const erased = (didType: 'DATASET' | 'CONTAINER'): DomainEvent => ({
        type: 'DidErased',
        data: { scope: 'user.jdoe', name: 'x', didType, children: [], erasedAt: AT, reason: 'emptied by the reaper' },
      });
      given()
        .when(erased('DATASET'))
        .then([{ eventType: 'ERASE', payload: { account: 'root', scope: 'user.jdoe', name: 'x' } }]);
      given().when(erased('CONTAINER')).then([]);
    });
  });

  describe('replicas (the reaper, the necromancer)', () => {
    const deleted = (storage: 'deleted' | 'not-found') => ({
      scope: 'user.jdoe',
      name: 'f1',
      rse: 'DISK',
      rseId: 'disk-id',
      bytes: 100,
      path: '/data/user.jdoe/f1',
      previousState: 'BEING_DELETED' as const,
      declaredBad: false,
      storage,
      daemon: 'reaper',
      reason: 'obsolete',
      deletedAt: AT,
    });
    const deletionPayload = {
      scope: 'user.jdoe',
      name: 'f1',
      rse: 'DISK',
      'file-size': 100,
      bytes: 100,
      url: '/data/user.jdoe/f1',
      protocol: null,
      datatype: null,
      duration: null,
    };

    it('gives deletion-done for a replica deleted from storage', () => {
      given()
        .when({ type: 'ReplicaDeleted', data: deleted('deleted') })
        .then([{ eventType: 'deletion-done', payload: deletionPayload }]);
    });

    it('gives deletion-not-found when the storage no longer had the file', () => {
      given()
        .when({ type: 'ReplicaDeleted', data: deleted('not-found') })
        .then([{ eventType: 'deletion-not-found', payload: { ...deletionPayload, reason: 'File Not Found' } }]);
    });

    it('gives the deletion of a file erased with its last replica, and no ERASE for the file', () => {
      given()
        .when({
          type: 'DidErased',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            didType: 'FILE',
            children: [],
            erasedAt: AT,
            reason: 'last replica deleted',
            replicasDeleted: [deleted('deleted')],
          },
        })
        .then([{ eventType: 'deletion-done', payload: deletionPayload }]);
    });

    it('gives LOST per dataset a lost file leaves', () => {
      given()
        .when({
          type: 'ReplicaLost',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            rse: 'DISK',
            rseId: 'disk-id',
            previousState: 'BAD',
            locks: {},
            cancelledRequest: null,
            datasets: [{ scope: 'user.jdoe', name: 'ds1' }],
            reason: 'no other copy',
            lostAt: AT,
          },
        })
        .then([
          {
            eventType: 'LOST',
            payload: { scope: 'user.jdoe', name: 'f1', dataset_name: 'ds1', dataset_scope: 'user.jdoe' },
          },
        ]);
    });
  });

  describe('rules (rucio/core/rule.py generate_rule_notifications)', () => {
    it('gives the notifications the rule decider recorded, as recorded', () => {
      given()
        .when({
          type: 'RuleNotified',
          data: {
            ruleId: 'rule-1',
            scope: 'user.jdoe',
            name: 'ds1',
            account: 'jdoe',
            messages: [
              { eventType: 'RULE_OK', payload: { scope: 'user.jdoe', name: 'ds1', rule_id: 'rule-1' } },
              {
                eventType: 'DATASETLOCK_OK',
                payload: { scope: 'user.jdoe', name: 'ds1', rse: 'DISK', rse_id: 'disk-id', rule_id: 'rule-1' },
              },
            ],
            at: AT,
          },
        })
        .then([
          { eventType: 'RULE_OK', payload: { scope: 'user.jdoe', name: 'ds1', rule_id: 'rule-1' } },
          {
            eventType: 'DATASETLOCK_OK',
            payload: { scope: 'user.jdoe', name: 'ds1', rse: 'DISK', rse_id: 'disk-id', rule_id: 'rule-1' },
          },
        ]);
    });
  });

  describe('transfers (rucio/core/request.py, transfer.py)', () => {
    it('gives transfer-queued per request queued, in lower case', () => {
      given()
        .when(queued)
        .then([
          {
            eventType: 'transfer-queued',
            payload: {
              'request-id': 'r1',
              'request-type': 'transfer',
              scope: 'user.jdoe',
              name: 'f1',
              'dst-rse-id': 'dest-id',
              'dst-rse': 'DEST',
              state: 'queued',
              'retry-count': null,
              'rule-id': 'rule-1',
              activity: 'User Subscriptions',
              'file-size': 100,
              bytes: 100,
              'checksum-md5': null,
              'checksum-adler': '0cc737eb',
              queued_at: '2026-11-22 09:00:00',
            },
          },
        ]);
    });

    it('gives transfer-queued per intermediate hop of a multihop path, with Rucio’s placeholder rule', () => {
      const hops = hopRecords(
        record,
        [{ id: 'hop1', destRseId: 'hop-id', destRse: 'HOP', sourceRse: 'SRC' }],
        ['SRC', 'HOP', 'DEST'],
        '2026-11-22T09:10:00.000Z',
      );
      given()
        .when({
          type: 'RequestHopsQueued',
          data: {
            paths: [{ initialRequestId: 'r1', path: ['SRC', 'HOP', 'DEST'], hops }],
            queuedAt: '2026-11-22T09:10:00.000Z',
          },
        })
        .then([
          {
            eventType: 'transfer-queued',
            payload: {
              'request-id': 'hop1',
              'request-type': 'transfer',
              scope: 'user.jdoe',
              name: 'f1',
              'dst-rse-id': 'hop-id',
              'dst-rse': 'HOP',
              state: 'queued',
              'retry-count': 0,
              'rule-id': '00000000000000000000000000000000',
              activity: 'User Subscriptions',
              'file-size': 100,
              bytes: 100,
              'checksum-md5': null,
              'checksum-adler': '0cc737eb',
              queued_at: '2026-11-22 09:10:00',
            },
          },
        ]);
    });

    it('gives transfer-submitted with the first source, the job and the enum names Rucio’s encoder writes', () => {
      given([queued, submitting('fts3')])
        .when(submitted('https://fts:8446'))
        .then([
          {
            eventType: 'transfer-submitted',
            payload: {
              'request-id': 'r1',
              'request-type': 'TRANSFER',
              scope: 'user.jdoe',
              name: 'f1',
              dataset: 'ds1',
              datasetScope: 'user.jdoe',
              'src-rse-id': 'src-id',
              'src-rse': 'SRC',
              'dst-rse-id': 'dest-id',
              'dst-rse': 'DEST',
              state: 'SUBMITTED',
              activity: 'User Subscriptions',
              'file-size': 100,
              bytes: 100,
              'checksum-md5': null,
              'checksum-adler': '0cc737eb',
              'external-id': 'job-1',
              'external-host': 'https://fts:8446',
              queued_at: '2026-11-22 09:31:00',
              datatype: null,
            },
          },
        ]);
    });

    it('gives transfer-submission_failed when the tool refused the job', () => {
      given([queued, submitting('mock')])
        .when({
          type: 'RequestSubmissionFailed',
          data: { requests: [{ requestId: 'r1', reason: 'refused' }], failedAt: '2026-11-22T09:31:00.000Z' },
        })
        .then([
          {
            eventType: 'transfer-submission_failed',
            payload: {
              'request-id': 'r1',
              'request-type': 'TRANSFER',
              scope: 'user.jdoe',
              name: 'f1',
              dataset: 'ds1',
              datasetScope: 'user.jdoe',
              'src-rse-id': 'src-id',
              'src-rse': 'SRC',
              'dst-rse-id': 'dest-id',
              'dst-rse': 'DEST',
              state: 'SUBMISSION_FAILED',
              activity: 'User Subscriptions',
              'file-size': 100,
              bytes: 100,
              'checksum-md5': null,
              'checksum-adler': '0cc737eb',
              'external-id': null,
              'external-host': null,
              queued_at: '2026-11-22 09:31:00',
              datatype: null,
            },
          },
        ]);
    });

    it('gives transfer-done with the source the tool used, the duration, and FTS3’s monitoring link', () => {
      given([queued, submitting('fts3'), submitted('https://fts:8446')])
        .when({
          type: 'TransferSucceeded',
          data: {
            requests: [{ ...link, startedAt: '2026-11-22T09:32:00.000Z', transferredAt: '2026-11-22T09:32:42.500Z' }],
          },
        })
        .then([
          {
            eventType: 'transfer-done',
            payload: {
              ...outcomeFields,
              duration: 42,
              'src-rse': 'OTHER',
              'src-url': 'davs://other:443/data/f1',
              reason: null,
              'transfer-endpoint': 'https://fts:8446',
              started_at: '2026-11-22 09:32:00',
              transferred_at: '2026-11-22 09:32:42.500000',
              transfer_link: 'https://fts:8449/fts3/ftsmon/#/job/job-1',
            },
          },
        ]);
    });

    it('gives transfer-failed with the reason, and transfer-lost without times', () => {
      const before = [queued, submitting('mock'), submitted('mock')];
      given(before)
        .when({
          type: 'TransferFailed',
          data: {
            requests: [{ ...link, reason: 'boom', startedAt: null, failedAt: '2026-11-22T09:33:00.000Z' }],
          },
        })
        .then([
          {
            eventType: 'transfer-failed',
            payload: {
              ...outcomeFields,
              duration: -1,
              'src-rse': 'OTHER',
              'src-url': 'davs://other:443/data/f1',
              reason: 'boom',
              'transfer-endpoint': 'mock',
              started_at: null,
              transferred_at: '2026-11-22 09:33:00',
            },
          },
        ]);
      given(before)
        .when({
          type: 'TransferLost',
          data: { requests: [{ ...link, reason: 'The transfer job was lost', lostAt: '2026-11-22T09:33:00.000Z' }] },
        })
        .then([
          {
            eventType: 'transfer-lost',
            payload: {
              ...outcomeFields,
              duration: -1,
              'src-rse': 'OTHER',
              'src-url': 'davs://other:443/data/f1',
              reason: 'The transfer job was lost',
              'transfer-endpoint': 'mock',
              started_at: null,
              transferred_at: null,
            },
          },
        ]);
    });

    it('gives nothing for a request the batch did not hold', () => {
      given([]).when(submitted('mock')).then([]);
    });
  });

  describe('routing (messaging-hermes destination, routes, event_types)', () => {
    const routing = {
      destination: '/topic/rucio.events',
      routes: parseRoutes('transfer-*=/queue/transfers, rule_ok=/queue/rules')!,
      eventTypes: parseTypePatterns('transfer-*, RULE_*, create_dts')!,
    };

    it('sends a type to the first route that matches it, in lower case', () => {
      expect(destinationOf(routing, 'transfer-done')).to.equal('/queue/transfers');
      expect(destinationOf(routing, 'RULE_OK')).to.equal('/queue/rules');
    });

    it('sends a type no route names to the destination', () => {
      expect(destinationOf(routing, 'RULE_PROGRESS')).to.equal('/topic/rucio.events');
      expect(destinationOf(routing, 'CREATE_DTS')).to.equal('/topic/rucio.events');
    });

    it('sends nothing of a type event_types leaves out', () => {
      expect(destinationOf(routing, 'CREATE_CNT')).to.equal(undefined);
      expect(destinationOf(routing, 'deletion-done')).to.equal(undefined);
    });

    it('refuses routes and patterns that are not pattern=destination or not patterns', () => {
      expect(parseRoutes('transfer-*')).to.equal(undefined);
      expect(parseRoutes('transfer-*=queue')).to.equal(undefined);
      expect(parseTypePatterns('rule ok')).to.equal(undefined);
      expect(parseRoutes('')).to.deep.equal([]);
    });
  });

  describe('Python’s way of printing dates and durations', () => {
    it('prints a date as str(datetime) does, the fraction in microseconds and only when there is one', () => {
      expect(pythonDate('2026-11-22T09:00:00.000Z')).to.equal('2026-11-22 09:00:00');
      expect(pythonDate('2026-11-22T09:00:00.120Z')).to.equal('2026-11-22 09:00:00.120000');
      expect(pythonDate(null)).to.equal(null);
    });

    it('counts timedelta.seconds: whole seconds, days left out, -1 without both ends', () => {
      expect(pythonDurationSeconds('2026-11-22T09:00:00.000Z', '2026-11-23T09:00:05.900Z')).to.equal(5);
      expect(pythonDurationSeconds(null, '2026-11-22T09:00:00.000Z')).to.equal(-1);
    });
  });
});
