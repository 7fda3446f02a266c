import { expect } from 'chai';
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { SubscriptionBatch } from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { RedisPositionSignals, type PositionSignalName } from '../../infra/queue/redisPositionSignals.ts';
import { eventually } from '../support/eventually.ts';
import { uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

const redisUrl = () => process.env.REDIS_URL!;

const open = (prefix: string, listen: readonly PositionSignalName[]) =>
  RedisPositionSignals.open({ url: redisUrl(), prefix, listen, logger: silentLogger() });

const received = (signals: RedisPositionSignals, signal: PositionSignalName) =>
  signals.signalCounts().find((count) => count.signal === signal && count.event === 'received')!.count;

describe('RedisPositionSignals', () => {
  const opened: RedisPositionSignals[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((signals) => signals.close()));
  });

  it('delivers a published position to the processes listening to that signal, and only to them', async () => {
    const prefix = uniqueName('signals');
    const [projector, api, otherDeployment] = await Promise.all([
      open(prefix, ['appended']),
      open(prefix, ['applied:dids']),
      open(uniqueName('signals'), ['appended']),
    ]);
    opened.push(projector, api, otherDeployment);
    const heard: bigint[] = [];
    projector.signal('appended').subscribe((position) => heard.push(position));
    expect(projector.signal('appended').isListening()).to.equal(true);
    expect(projector.signal('applied:dids').isListening()).to.equal(false);

    api.signal('appended').publish(42n);

    await eventually(() => heard.length > 0, 5000, 'the announcement');
    expect(heard).to.deep.equal([42n]);
    expect(received(api, 'appended')).to.equal(0);
    expect(received(otherDeployment, 'appended')).to.equal(0);
  });

  it('sends only the highest of the positions published in one turn of the event loop', async () => {
    const prefix = uniqueName('signals');
    const [listener, publisher] = await Promise.all([open(prefix, ['applied:dids']), open(prefix, [])]);
    opened.push(listener, publisher);
    const heard: bigint[] = [];
    listener.signal('applied:dids').subscribe((position) => heard.push(position));

    for (const position of [3n, 7n, 5n]) publisher.signal('applied:dids').publish(position);
    await eventually(() => heard.length > 0, 5000, 'the announcement');
    publisher.signal('applied:dids').publish(8n);
    await eventually(() => heard.length > 1, 5000, 'the second announcement');

    expect(heard).to.deep.equal([7n, 8n]);
    expect(publisher.signalCounts()).to.deep.include({ signal: 'applied:dids', event: 'published', count: 2 });
  });

  it('says it is not listening while its connection is down, and listens again once resubscribed', async () => {
    const prefix = uniqueName('signals');
    const [listener, publisher] = await Promise.all([open(prefix, ['applied:dids']), open(prefix, [])]);
    opened.push(listener, publisher);
    const heard: bigint[] = [];
    listener.signal('applied:dids').subscribe((position) => heard.push(position));
    const admin = new Redis(redisUrl());
    try {
      const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      const id = /id=(\d+) .*name=(\S+)/
        .exec(clients.split('\n').find((line) => line.includes(`name=${prefix}:position-signals:listen`)) ?? '')
        ?.at(1);
      expect(id, clients).to.be.a('string');
      await admin.call('CLIENT', 'KILL', 'ID', id!);
    } finally {
      admin.disconnect();
    }
    await eventually(() => !listener.isListening(), 5000, 'noticing the dropped connection');
    await eventually(() => listener.isListening(), 10_000, 'subscribing again');

    publisher.signal('applied:dids').publish(9n);

    await eventually(() => heard.length > 0, 5000, 'the announcement after the reconnection');
    expect(heard).to.deep.equal([9n]);
  });
});

describe('SqliteEventStore shared between processes', () => {
  it("wakes a subscription when another process announces its append, long before the subscription's next poll", async function () {
    this.timeout(30_000);
    const dir = makeTempDir();
    const prefix = uniqueName('wake');
    const signals = await open(prefix, ['appended']);
    // Ten minutes between polls: within this test only the announcement can bring the event.
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), {
      pollIntervalMs: 600_000,
      crossProcess: signals.signal('appended'),
    });
    const subscription = store.subscribeToAll();
    try {
      const batch = subscription[Symbol.asyncIterator]().next();
      const stream = uniqueName('elsewhere-');
      const written = await appendInAnotherProcess(dir.path, stream, prefix);

      const delivered = await Promise.race([
        batch,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the subscription was not woken by the announcement')), 20_000),
        ),
      ]);
      const events = (delivered.value as SubscriptionBatch).events;
      expect(events.map((event) => [event.streamName, event.position])).to.deep.equal([[stream, written]]);
      expect(received(signals, 'appended')).to.equal(1);
    } finally {
      await subscription.close();
      await store.close();
      await signals.close();
      dir.dispose();
    }
  });
});

/** Runs test/fixtures/appendAndAnnounce.ts; resolves with the position it appended at. */
const appendInAnotherProcess = (dir: string, stream: string, prefix: string): Promise<bigint> =>
  new Promise((resolve, reject) => {
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'appendAndAnnounce.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir, stream, redisUrl(), prefix], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(BigInt(output.trim())) : reject(new Error(`the appending process exited with ${code}`)),
    );
  });
