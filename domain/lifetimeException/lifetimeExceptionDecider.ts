import { unknownCommand, type Decider } from '../shared/decider.ts';
import { UnsupportedOperation } from '../shared/errors.ts';
import { LifetimeExceptionNotFound } from './lifetimeExceptionErrors.ts';
import type { Command } from '../shared/event.ts';
import {
  evolveLifetimeException,
  exceptionStateOf,
  initialLifetimeException,
  type LifetimeException,
  type LifetimeExceptionEvent,
  type LifetimeExceptionRecord,
} from './lifetimeException.ts';

/**
 * Decisions on one lifetime exception: its request (WAITING), and an admin's approval or
 * rejection (Rucio's `update_exception`: only APPROVED or REJECTED may be set, either way and
 * again; setting the state it has changes nothing).
 */

export type RequestException = Command<'RequestException', { exception: LifetimeExceptionRecord }>;
/** `state` as the request gave it: A, R (or APPROVED, REJECTED); anything else is UnsupportedOperation. */
export type DecideException = Command<'DecideException', { id: string; state: unknown }>;
export type LifetimeExceptionCommand = RequestException | DecideException;

/** Ids are made for the request: asking again with one that exists changes nothing. */
export const requestException = ({ data }: RequestException, state: LifetimeException): LifetimeExceptionEvent[] =>
  state.status === 'Absent' ? [{ type: 'ExceptionRequested', data: { exception: data.exception } }] : [];

export const decideException = (
  { data, metadata }: DecideException,
  state: LifetimeException,
): LifetimeExceptionEvent[] => {
  const wanted = exceptionStateOf(data.state);
  if (wanted !== 'APPROVED' && wanted !== 'REJECTED')
    throw new UnsupportedOperation(
      `A lifetime exception can only be APPROVED (A) or REJECTED (R), not ${JSON.stringify(data.state ?? null)}.`,
    );
  if (state.status !== 'Live')
    throw new LifetimeExceptionNotFound(`No lifetime exception with the id ${data.id} found`);
  if (state.state === wanted) return [];
  const decision = {
    id: data.id,
    approver: metadata.account,
    previousState: state.state,
    at: metadata.now.toISOString(),
  };
  return [
    wanted === 'APPROVED'
      ? { type: 'ExceptionApproved', data: decision }
      : { type: 'ExceptionRejected', data: decision },
  ];
};

export const decideLifetimeException = (
  command: LifetimeExceptionCommand,
  state: LifetimeException,
): LifetimeExceptionEvent[] => {
  switch (command.type) {
    case 'RequestException':
      return requestException(command, state);
    case 'DecideException':
      return decideException(command, state);
    default:
      return unknownCommand('lifetime exception', command);
  }
};

export const lifetimeExceptionDecider: Decider<LifetimeException, LifetimeExceptionCommand, LifetimeExceptionEvent> = {
  name: 'lifetimeException',
  initialState: initialLifetimeException,
  evolve: evolveLifetimeException,
  decide: decideLifetimeException,
};
