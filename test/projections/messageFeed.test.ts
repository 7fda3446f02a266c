import { expect } from 'chai';
import { join } from 'node:path';
import type { RequestEvent } from '../../domain/request/request.ts';
import { eventUpcasters } from '../../domain/areas.ts';
import type { NewEvent } from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { MessageFeed } from '../../projections/message/messageFeed.ts';
import { created } from '../support/didEvents.ts';
import { newEvent } from '../support/events.ts';
import { transferLink, transferRequest } from '../support/requestSpec.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The one reader of messages (projections/message/messageFeed.ts) over a real SQLite log: it
 * starts anywhere, folds a batch of transfer requests from its stream when it meets the batch
 * past its start, pages by whole events, and keeps only so many batches folded.
 */

const record = (id: string, name: string) =>
  transferRequest({ id, name, adler32: null, attributes: { adler32: null } });

/** The life of a batch's requests up to DONE, as the conveyor writes it. */
const lifeOf = (ids: readonly string[]): RequestEvent[] => [
  {
    type: 'RequestQueued',
    data: { requests: ids.map((id) => ({ request: record(id, `f-${id}`), state: 'QUEUED' as const })) },
  },
  {
    type: 'RequestSubmitting',
    data: {
      requests: ids.map((requestId) => ({
        requestId,
        sources: [{ rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: `root://src/${requestId}` }],
        destUrl: `root://dest/${requestId}`,
        transfertool: 'mock',
      })),
      submittingAt: '2026-11-22T09:01:00.000Z',
    },
  },
  {
    type: 'RequestSubmitted',
    data: {
      requests: ids.map((requestId) => ({ requestId, externalId: `job-${requestId}`, externalHost: 'mock' })),
      submittedAt: '2026-11-22T09:02:00.000Z',
    },
  },
  {
    type: 'TransferSucceeded',
    data: {
      requests: ids.map((requestId) => ({
        ...transferLink({ requestId, name: `f-${requestId}`, externalId: `job-${requestId}` }),
        startedAt: null,
        transferredAt: '2026-11-22T09:03:00.000Z',
      })),
    },
  },
];

describe('MessageFeed: the messages of the event log, from any position', () => {
  const dir = makeTempDir('message-feed-');
  let store: SqliteEventStore;
  let positions: bigint[];

  before(async () => {
    store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    positions = [];
    // Two batches whose lives interleave in the log, and a dataset between them.
    const a = lifeOf(['a1', 'a2']);
    const b = lifeOf(['b1']);
    const dataset = newEvent('DidCreated', created('ds1', 'DATASET', { createdAt: '2026-11-22T09:00:00.000Z' }).data);
    const order: [string, NewEvent][] = [];
    const asStored = (event: RequestEvent) => newEvent(event.type, event.data);
    for (let step = 0; step < 4; step += 1) {
      order.push(['requests-rule-1-DEST-a1', asStored(a[step]!)], ['requests-rule-1-DEST-b1', asStored(b[step]!)]);
      if (step === 1) order.push(['did-user.jdoe:ds1', dataset]);
    }
    for (const [stream, event] of order) positions.push((await store.appendToStream(stream, [event])).position);
  });
  after(async () => {
    await store.close();
    dir.dispose();
  });

  const typesAndNames = (messages: readonly { message: { eventType: string; payload: Record<string, unknown> } }[]) =>
    messages.map(({ message }) => `${message.eventType} ${String(message.payload.name)}`);

  it('gives every message from the start, in log order', async () => {
    const page = await new MessageFeed(store, eventUpcasters).page(0n, 1000);
    expect(page.atEnd).to.equal(true);
    expect(page.through).to.equal(positions[positions.length - 1]);
    expect(typesAndNames(page.messages)).to.deep.equal([
      'transfer-queued f-a1',
      'transfer-queued f-a2',
      'transfer-queued f-b1',
      'CREATE_DTS ds1',
      'transfer-submitted f-a1',
      'transfer-submitted f-a2',
      'transfer-submitted f-b1',
      'transfer-done f-a1',
      'transfer-done f-a2',
      'transfer-done f-b1',
    ]);
  });

  it('folds a batch from its stream when it starts past the batch’s first event', async () => {
    // After the dataset's creation, past both batches' queuing and submitting: the feed saw neither.
    const page = await new MessageFeed(store, eventUpcasters).page(positions[4]!, 1000);
    expect(typesAndNames(page.messages)).to.deep.equal([
      'transfer-submitted f-a1',
      'transfer-submitted f-a2',
      'transfer-submitted f-b1',
      'transfer-done f-a1',
      'transfer-done f-a2',
      'transfer-done f-b1',
    ]);
    expect(page.messages[0]!.message.payload).to.include({ 'src-rse': 'SRC', 'external-id': 'job-a1' });
    expect(page.messages[3]!.message.payload).to.include({
      'src-url': 'root://src/a1',
      'dst-url': 'root://dest/a1',
      submitted_at: '2026-11-22 09:02:00',
    });
  });

  it('pages by whole events: a page ends after the event that reached the bound, and the next goes on from there', async () => {
    const feed = new MessageFeed(store, eventUpcasters);
    const first = await feed.page(0n, 1);
    expect(typesAndNames(first.messages)).to.deep.equal(['transfer-queued f-a1', 'transfer-queued f-a2']);
    expect(first).to.include({ through: positions[0], atEnd: false });
    const second = await feed.page(first.through, 2);
    expect(typesAndNames(second.messages)).to.deep.equal(['transfer-queued f-b1', 'CREATE_DTS ds1']);
    // The events without messages before the dataset's creation are passed too.
    expect(second.through).to.equal(positions[4]);
  });

  it('gives the same messages when it keeps only one batch folded at a time', async () => {
    const tight = await new MessageFeed(store, eventUpcasters, { cachedRequests: 1, batchSize: 2 }).page(0n, 1000);
    const roomy = await new MessageFeed(store, eventUpcasters).page(0n, 1000);
    expect(tight.messages).to.deep.equal(roomy.messages);
  });
});
