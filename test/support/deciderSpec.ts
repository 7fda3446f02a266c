import { expect } from 'chai';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import type { RucioErrorClass } from '../../domain/shared/errors.ts';

type Decider<Command, Event, State> = {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
};

/** given(events).when(command).then(events): the state comes only from the given events. */
export const deciderSpec =
  <Command, Event, State>(decider: Decider<Command, Event, State>) =>
  (given: Event[]) => ({
    when: (command: Command) => {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
      return {
        then: (expected: Event[]) => expect(run()).to.deep.equal(expected),
        thenNothingHappened: () => expect(run()).to.deep.equal([]),
        thenThrows: (errorClass: RucioErrorClass, message?: RegExp) => {
          let failure: unknown;
          try {
            run();
          } catch (error) {
            failure = error;
          }
          expect(failure, 'the command should have been refused').to.be.instanceOf(errorClass);
          if (message) expect((failure as Error).message).to.match(message);
        },
      };
    },
  });

export const NOW = new Date('2026-11-22T10:00:00.000Z');
export const AT = NOW.toISOString();

export const metadata = (account = 'root'): CommandMetadata => ({ now: NOW, account, requestId: 'request-1' });
