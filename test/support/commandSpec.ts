import { expect } from 'chai';
import { join } from 'node:path';
import { createCommandContext, type CommandContext } from '../../commands/commandContext.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import type { RucioErrorClass } from '../../domain/shared/errors.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../../projections/index.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import type { StreamedEvent } from './projectionHarness.ts';
import { newEvent } from './events.ts';
import { makeTempDir } from './tempDir.ts';

/** The time every command of a command spec is decided at, so events' times are known. */
export const SPEC_NOW = new Date('2026-11-22T10:00:00.000Z');

/** The metadata of a command issued by `account` at SPEC_NOW. */
export const as = (account: string): CommandMetadata => ({ now: SPEC_NOW, account, requestId: `spec-${account}` });

type Run = (context: CommandContext) => Promise<unknown>;

/**
 * Command-layer specifications: given events on their streams (appended to a real SQLite event
 * store and projected, so the facts commands read from the read models are there too), when a
 * command module's function runs, then exactly these events were appended, or the command was
 * refused with this error class and nothing was appended. Each `it` gets fresh stores.
 *
 *   const spec = commandSpec();
 *   it('...', () => spec.given([...]).when((context) => createAccount(context, data, as('root'))).then([...]));
 */
export const commandSpec = () => {
  let dir: ReturnType<typeof makeTempDir>;
  let eventStore: SqliteEventStore;
  let readStore: SqliteReadStore;
  let readModels: ReadModels;
  let context: CommandContext;

  beforeEach(() => {
    dir = makeTempDir('command-spec');
    eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    readModels = ReadModels.in(readStore);
    context = createCommandContext({ eventStore, ...readModelPorts(readModels) });
  });
  afterEach(async () => {
    await eventStore.close();
    await readStore.close();
    dir.dispose();
  });

  const project = async () => {
    const runner = new ProjectionRunner({
      eventStore,
      readStore,
      readModels,
      projections: allProjections,
      logger: silentLogger(),
    });
    await runner.start();
    await runner.waitFor(await eventStore.headPosition(), 5000);
    await runner.stop();
  };

  const appendedBy = async (run: Run): Promise<{ events: StreamedEvent[]; failure: unknown }> => {
    const head = await eventStore.headPosition();
    let failure: unknown;
    try {
      await run(context);
    } catch (error) {
      failure = error;
    }
    const events = (await eventStore.readAll({ after: head, maxCount: 100_000 })).map((event) => ({
      stream: event.streamName,
      type: event.type,
      data: event.data as object,
    }));
    return { events, failure };
  };

  /**
   * History given as events on their streams, or made by running commands; `settle` projects
   * what they wrote so far, for commands that read facts from the read models.
   */
  type Given = readonly StreamedEvent[] | ((context: CommandContext, settle: () => Promise<void>) => Promise<unknown>);

  return {
    given: (history: Given) => ({
      when: (run: Run) => {
        const outcome = (async () => {
          if (typeof history === 'function') await history(context, project);
          else
            for (const event of history)
              await eventStore.appendToStream(event.stream, [newEvent(event.type, event.data, event.schemaVersion)]);
          await project();
          return appendedBy(run);
        })();
        return {
          async then(expected: readonly StreamedEvent[]) {
            const { events: appended, failure } = await outcome;
            if (failure) throw failure;
            expect(appended).to.deep.equal(expected);
          },
          async thenNothingHappened() {
            const { events: appended, failure } = await outcome;
            if (failure) throw failure;
            expect(appended).to.deep.equal([]);
          },
          /** For appends whose ids or times the test cannot know: `check` looks at them itself. */
          async thenAppended(check: (events: readonly StreamedEvent[]) => void) {
            const { events: appended, failure } = await outcome;
            if (failure) throw failure;
            check(appended);
          },
          async thenRefused(errorClass: RucioErrorClass, message?: RegExp) {
            const { events: appended, failure } = await outcome;
            expect(failure, 'the command should have been refused').to.be.instanceOf(errorClass);
            if (message) expect((failure as Error).message).to.match(message);
            expect(appended, 'a refused command appends nothing').to.deep.equal([]);
          },
        };
      },
    }),
  };
};
