import { expect } from 'chai';
import { join } from 'node:path';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import { finishLeftSteps, leftStepsCheck, StepEventType, stepStreamName } from '../../infra/eventstore/leftSteps.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { newEvent } from '../support/events.ts';
import { writeLeftStep } from '../support/leftStep.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Steps the retired stepped protocol left half written, over a real SQLite log holding what such
 * a writer wrote (test/support/leftStep.ts): the start's check, then `dms events finish-steps`'
 * completion. The same runs against KurrentDB in esdbEventStore.test.ts when ESDB_URL is set.
 */
describe('Steps left by an older deployment', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let store: EventStore;

  beforeEach(() => {
    dir = makeTempDir();
    store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
  });

  afterEach(async () => {
    await store.close();
    dir.dispose();
  });

  describe('the check at start', () => {
    it('finds a log without a journal clean', async () => {
      expect(await leftStepsCheck(store)).to.deep.equal({ clean: true });
    });

    it('refuses a log whose journal was not closed, naming the command that closes it', async () => {
      const step = await writeLeftStep(store, 1);
      const check = await leftStepsCheck(store, step.journal);
      expect(check.clean).to.equal(false);
      expect(!check.clean && check.reason).to.include('dms events finish-steps');
    });
  });

  describe('finishing them', () => {
    it('writes nothing to a log the stepped protocol never wrote to', async () => {
      expect(await finishLeftSteps(store)).to.deep.equal({ open: 0, completed: 0, abandoned: [] });
      expect(await store.headPosition()).to.equal(0n);
    });

    it('appends the streams a step had not reached, at their recorded revisions, and records it completed', async () => {
      const step = await writeLeftStep(store, 1);
      const finished = await finishLeftSteps(store, { journal: step.journal });
      expect(finished).to.deep.equal({ open: 1, completed: 1, abandoned: [] });
      for (const stream of step.streams) {
        const events = await store.readStream(stream.streamName);
        expect(events.map((event) => event.id)).to.deep.equal(stream.events.map((event) => event.id));
      }
      const stepEvents = await store.readStream(stepStreamName(step.stepId));
      expect(stepEvents.map((event) => event.type)).to.deep.equal([StepEventType.started, StepEventType.completed]);
      expect(await leftStepsCheck(store, step.journal)).to.deep.equal({ clean: true });
    });

    it('writes nothing twice when run again', async () => {
      const step = await writeLeftStep(store, 2);
      await finishLeftSteps(store, { journal: step.journal });
      const head = await store.headPosition();
      const again = await finishLeftSteps(store, { journal: step.journal });
      expect(again.open).to.equal(0);
      // Only the journal's closing event of the second run.
      expect(await store.headPosition()).to.equal(head + 1n);
      for (const stream of step.streams) expect(await store.readStream(stream.streamName)).to.have.length(2);
    });

    it('closes a step whose every stream was written but whose completion was not recorded', async () => {
      const step = await writeLeftStep(store, 3);
      expect(await finishLeftSteps(store, { journal: step.journal })).to.deep.equal({
        open: 1,
        completed: 1,
        abandoned: [],
      });
      for (const stream of step.streams) expect(await store.readStream(stream.streamName)).to.have.length(2);
    });

    it('records as abandoned, and names, a step whose stream moved on without its events', async () => {
      const step = await writeLeftStep(store, 1);
      const taken = step.streams[2]!.streamName;
      await store.appendToStream(taken, [newEvent('Other')], 'no_stream');
      const finished = await finishLeftSteps(store, { journal: step.journal });
      expect(finished).to.deep.equal({ open: 1, completed: 0, abandoned: [{ stepId: step.stepId, streams: [taken] }] });
      expect((await store.readStream(taken)).map((event) => event.type)).to.deep.equal(['Other']);
      const stepEvents = await store.readStream(stepStreamName(step.stepId));
      expect(stepEvents.map((event) => event.type)).to.deep.equal([StepEventType.started, StepEventType.abandoned]);
      expect(await leftStepsCheck(store, step.journal)).to.deep.equal({ clean: true });
    });
  });
});
