import { expect } from 'chai';
import { join } from 'node:path';
import { createCommandContext } from '../../commands/commandContext.ts';
import { handleCommand, handleCommands, loadState, onStream } from '../../commands/handleCommand.ts';
import { deterministicUuid, timeOrderedUuid } from '../../infra/eventstore/eventIds.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { accountStreamName } from '../../domain/account/account.ts';
import { accountDecider, type AccountCommand } from '../../domain/account/accountDecider.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('handleCommand', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let store: SqliteEventStore;
  let readStore: SqliteReadStore;
  beforeEach(() => {
    dir = makeTempDir();
    store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  });
  const closeAfter: SqliteEventStore[] = [];
  afterEach(async () => {
    for (const other of closeAfter.splice(0)) await other.close();
    await store.close();
    await readStore.close();
    dir.dispose();
  });
  const createContext = () => createCommandContext({ eventStore: store, ...readModelPorts(ReadModels.in(readStore)) });

  const metadata = () => ({ now: new Date(), account: 'root', requestId: 'r' });
  const create = (account: string): AccountCommand => ({
    type: 'CreateAccount',
    data: { account, accountType: 'USER', email: null },
    metadata: metadata(),
  });
  const addAttribute = (account: string, key: string): AccountCommand => ({
    type: 'AddAccountAttribute',
    data: { account, key, value: 'v' },
    metadata: metadata(),
  });

  it('re-reads and decides again when another process wrote first', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const first = createContext();
    // Another process: its own connection to the same log, whose commands do not take turns with ours.
    const otherStore = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    closeAfter.push(otherStore);
    const second = createCommandContext({
      eventStore: otherStore,
      ...readModelPorts(ReadModels.in(readStore)),
    });
    await handleCommand(first, accountDecider, streamName, create(account));
    // Both contexts cache the state at revision 0, then write concurrently.
    await loadState(second, accountDecider, streamName);
    const outcomes = await Promise.all(
      ['a', 'b', 'c'].map((key, index) =>
        handleCommand([first, second, first][index]!, accountDecider, streamName, addAttribute(account, key)),
      ),
    );
    expect(outcomes.every((outcome) => outcome.position !== undefined)).to.equal(true);
    const events = await store.readStream(streamName);
    expect(events.map((event) => event.type)).to.deep.equal([
      'AccountCreated',
      'AccountAttributeAdded',
      'AccountAttributeAdded',
      'AccountAttributeAdded',
    ]);
    const { state } = await loadState(second, accountDecider, streamName);
    expect(state).to.have.nested.property('attributes.c');
  });

  it("lets one process's commands on a stream take turns: ten at once succeed without a retry", async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const context = createContext();
    await handleCommand(context, accountDecider, streamName, create(account));
    const keys = Array.from({ length: 10 }, (_, index) => `k${index}`);
    const outcomes = await Promise.all(
      keys.map((key) => handleCommand(context, accountDecider, streamName, addAttribute(account, key), { retries: 0 })),
    );
    expect(outcomes.every((outcome) => outcome.position !== undefined)).to.equal(true);
    expect((await store.readStream(streamName)).map((event) => event.type)).to.have.length(11);
  });

  it('derives event ids from the cause, so a retried job appends nothing twice', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const first = await handleCommand(createContext(), accountDecider, streamName, create(account), {
      causationId: 'event-42',
    });
    const again = await store.appendToStream(
      streamName,
      [
        {
          id: deterministicUuid(`event-42/${streamName}/0`),
          type: 'AccountCreated',
          data: {},
          metadata: { account: 'root', requestId: 'r', at: 'x', schemaVersion: 1 },
        },
      ],
      'no_stream',
    );
    expect(again.position).to.equal(first.position);
    expect(await store.readStream(streamName)).to.have.length(1);
    expect((await store.readStream(streamName))[0]!.metadata.causationId).to.equal('event-42');
  });

  it('answers a job run again that decides otherwise with what its first run stored, and keeps no state it did not store', async () => {
    // A scheduled job taken over from a killed process runs again with the same id, on a stream
    // that moved on since its first run: it decides something else, under the first run's event ids.
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const context = createContext();
    await handleCommand(context, accountDecider, streamName, create(account));
    await handleCommand(context, accountDecider, streamName, addAttribute(account, 'first'), { causationId: 'job-7' });
    await handleCommand(createContext(), accountDecider, streamName, addAttribute(account, 'other'));

    const again = await handleCommand(context, accountDecider, streamName, addAttribute(account, 'second'), {
      causationId: 'job-7',
    });

    expect(again.events.map((event) => event.data)).to.deep.equal([{ account, key: 'first', value: 'v' }]);
    expect(again.newState).to.have.nested.property('attributes.other');
    expect(again.newState).not.to.have.nested.property('attributes.second');
    expect(await store.readStream(streamName)).to.have.length(3);
    // The process's next decision sees the stream as stored: the attribute is added, not taken for there.
    const next = await handleCommand(context, accountDecider, streamName, addAttribute(account, 'second'));
    expect(next.events.map((event) => event.type)).to.deep.equal(['AccountAttributeAdded']);
    expect(await store.readStream(streamName)).to.have.length(4);
  });

  it('returns no position when the decision is to do nothing', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const context = createContext();
    await handleCommand(context, accountDecider, streamName, create(account));
    const head = await store.headPosition();
    const outcome = await handleCommand(context, accountDecider, streamName, {
      type: 'UpdateAccount',
      data: { account, key: 'status', value: 'ACTIVE' },
      metadata: metadata(),
    });
    expect(outcome.position).to.equal(undefined);
    expect(await store.headPosition()).to.equal(head);
  });

  it('decides several commands on one stream in order, each seeing what the one before did', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const outcome = await handleCommand(createContext(), accountDecider, streamName, [
      create(account),
      addAttribute(account, 'a'),
    ]);
    expect(outcome.events.map((event) => event.type)).to.deep.equal(['AccountCreated', 'AccountAttributeAdded']);
  });

  it('appends nothing of a step in which one stream refuses its command', async () => {
    const account = uniqueName('acc');
    const context = createContext();
    const failing = handleCommands(context, [
      onStream(accountDecider, accountStreamName(account), create(account)),
      onStream(accountDecider, accountStreamName(`${account}x`), addAttribute(`${account}x`, 'a')),
    ]);
    await expectRejection(failing, AccountNotFound);
    expect(await store.headPosition()).to.equal(0n);
  });

  it('gives new events time-ordered UUIDs: later ids sort after earlier ones, all distinct', () => {
    const earlier = timeOrderedUuid(Date.UTC(2026, 0, 1));
    const later = timeOrderedUuid(Date.UTC(2026, 0, 1) + 1);
    expect(earlier).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(earlier < later).to.equal(true);
    expect(new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid())).size).to.equal(10_000);
  });
});
