import { expect } from 'chai';
import { join } from 'node:path';
import { accountAggregate } from '../../commands/caller.ts';
import { createCommandContext } from '../../commands/commandContext.ts';
import { deterministicUuid, handleCommand, timeOrderedUuid } from '../../commands/handleCommand.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../../projections/index.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { accountStreamName, type Account, type AccountEvent } from '../../domain/account/account.ts';
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
  afterEach(async () => {
    await store.close();
    await readStore.close();
    dir.dispose();
  });
  const createContext = () => createCommandContext({ eventStore: store, ...readModelPorts(new ReadModels(readStore, allProjections)) });

  const metadata = () => ({ now: new Date(), account: 'root', requestId: 'r' });
  const create = (account: string) => (state: Account): AccountEvent[] =>
    state.status === 'Absent' ? [{ type: 'AccountCreated', data: { account, accountType: 'USER', email: null, createdAt: 'now' } }] : [];
  const addAttribute = (account: string, key: string) => (state: Account): AccountEvent[] =>
    state.status === 'Absent' || key in state.attributes ? [] : [{ type: 'AccountAttributeAdded', data: { account, key, value: 'v' } }];

  it('re-reads and decides again when another writer got there first', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const first = createContext();
    const second = createContext();
    await handleCommand(first, { streamName, aggregate: accountAggregate, decide: create(account) }, { metadata: metadata() });
    // Both contexts cache the state at revision 0, then write concurrently.
    await handleCommand(second, { streamName, aggregate: accountAggregate, decide: () => [] }, { metadata: metadata() });
    const outcomes = await Promise.all(
      ['a', 'b', 'c'].map((key, index) =>
        handleCommand([first, second, first][index]!, { streamName, aggregate: accountAggregate, decide: addAttribute(account, key) }, { metadata: metadata() }),
      ),
    );
    expect(outcomes.every((outcome) => outcome.position !== undefined)).to.equal(true);
    const events = await store.readStream(streamName);
    expect(events.map((event) => event.type)).to.deep.equal(['AccountCreated', 'AccountAttributeAdded', 'AccountAttributeAdded', 'AccountAttributeAdded']);
    const seen = await handleCommand(second, { streamName, aggregate: accountAggregate, decide: (state) => (expect(state).to.have.nested.property('attributes.c'), []) }, { metadata: metadata() });
    expect(seen.position).to.equal(undefined);
  });

  it('derives event ids from the cause, so a retried job appends nothing twice', async () => {
    const account = uniqueName('acc');
    const streamName = accountStreamName(account);
    const options = { metadata: metadata(), causationId: 'event-42' };
    const appendCreated = () =>
      handleCommand(
        createContext(),
        {
          streamName,
          aggregate: accountAggregate,
          // Decides without looking at the state, as a worker retry would after a crash.
          decide: (): AccountEvent[] => [{ type: 'AccountCreated', data: { account, accountType: 'USER', email: null, createdAt: 'now' } }],
        },
        { ...options },
      );
    const first = await appendCreated();
    const again = await store.appendToStream(
      streamName,
      [{ id: deterministicUuid(`event-42/${streamName}/0`), type: 'AccountCreated', data: {}, metadata: { account: 'root', requestId: 'r', at: 'x', schemaVersion: 1 } }],
      'no_stream',
    );
    expect(again.position).to.equal(first.position);
    expect(await store.readStream(streamName)).to.have.length(1);
    expect((await store.readStream(streamName))[0]!.metadata.causationId).to.equal('event-42');
  });

  it('returns no position when the decision is to do nothing', async () => {
    const outcome = await handleCommand(
      createContext(),
      { streamName: accountStreamName(uniqueName('acc')), aggregate: accountAggregate, decide: () => [] },
      { metadata: metadata() },
    );
    expect(outcome.position).to.equal(undefined);
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
