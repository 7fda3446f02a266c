import { expect } from 'chai';
import type { RecordedEvent, StepMark } from '../../infra/eventstore/eventStore.ts';
import { WholeSteps } from '../../projections/runtime/wholeSteps.ts';

let position = 0n;
const event = (type: string, step?: StepMark, streamName = `s-${type}`, data: object = {}): RecordedEvent => {
  position += 1n;
  return {
    id: `${type}-${position}`,
    type,
    data,
    metadata: {
      account: 'root',
      requestId: 'r',
      at: new Date(0).toISOString(),
      schemaVersion: 1,
      ...(step ? { step } : {}),
    },
    streamName,
    revision: 0n,
    position,
    recordedAt: new Date(0),
  };
};
const types = (events: readonly RecordedEvent[]) => events.map((recorded) => recorded.type);

describe('WholeSteps: a lane never applies half a multi-stream step', () => {
  const step = { id: 'step1', count: 3 };

  it('passes events without a step mark straight through', () => {
    const steps = new WholeSteps();
    expect(types(steps.release([event('A'), event('B')]))).to.deep.equal(['A', 'B']);
    expect(steps.heldCount).to.equal(0);
  });

  it('releases a step whose events all came in one batch', () => {
    const steps = new WholeSteps();
    expect(types(steps.release([event('S1', step), event('X'), event('S2', step), event('S3', step)]))).to.deep.equal([
      'S1',
      'X',
      'S2',
      'S3',
    ]);
  });

  it('holds everything from the first event of an incomplete step, and releases it when the rest arrives', () => {
    const steps = new WholeSteps();
    expect(types(steps.release([event('A'), event('S1', step), event('X')]))).to.deep.equal(['A']);
    expect(steps.heldCount).to.equal(2);
    expect(types(steps.release([event('S2', step)]))).to.deep.equal([]);
    expect(types(steps.release([event('S3', step), event('B')]))).to.deep.equal(['S1', 'X', 'S2', 'S3', 'B']);
    expect(steps.heldCount).to.equal(0);
  });

  it('counts an event delivered twice once', () => {
    const steps = new WholeSteps();
    const first = event('S1', step);
    expect(steps.release([first])).to.deep.equal([]);
    expect(steps.release([first, event('S2', step)])).to.deep.equal([]);
  });

  it('releases an abandoned step with the events it has', () => {
    const steps = new WholeSteps();
    expect(types(steps.release([event('S1', step)]))).to.deep.equal([]);
    expect(
      types(steps.release([event('StepAbandoned', undefined, 'step-step1', { stepId: 'step1' }), event('B')])),
    ).to.deep.equal(['S1', 'StepAbandoned', 'B']);
  });

  it('releases the steps before an incomplete one', () => {
    const steps = new WholeSteps();
    const other = { id: 'step2', count: 2 };
    expect(types(steps.release([event('T1', other), event('T2', other), event('S1', step)]))).to.deep.equal([
      'T1',
      'T2',
    ]);
  });
});
