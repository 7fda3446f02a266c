import type { DidType } from '../did/did.ts';
import { eventTypes, type Event } from '../shared/event.ts';

/**
 * A lifetime exception (Rucio's `lifetime_except` rows sharing one id, behaviour reference §8): an
 * account asks that some DIDs outlive their end of life; an admin approves or rejects it. While
 * approved and unexpired, atropos leaves the DIDs' rules alone. Each exception is an aggregate
 * with its own stream (`lifetimeexception-<id>`) holding every DID of the request's group.
 */
export const lifetimeExceptionStreamName = (id: string): string => `lifetimeexception-${id}`;

export const LIFETIME_EXCEPTION_STATES = ['WAITING', 'APPROVED', 'REJECTED'] as const;
export type LifetimeExceptionState = (typeof LIFETIME_EXCEPTION_STATES)[number];

/** The letters Rucio stores, which the approval route takes as well as the names. */
export const LIFETIME_EXCEPTION_STATE_LETTERS: Readonly<Record<string, LifetimeExceptionState>> = {
  W: 'WAITING',
  A: 'APPROVED',
  R: 'REJECTED',
};

export type ExceptionDid = Readonly<{ scope: string; name: string; didType: DidType }>;

export type LifetimeExceptionRecord = Readonly<{
  id: string;
  /** Who asked. */
  account: string;
  pattern: string | null;
  comments: string | null;
  /** When the exception ends (ISO); null for never (no `expires_at` given and no `max_extension` configured). */
  expiresAt: string | null;
  dids: readonly ExceptionDid[];
  createdAt: string;
}>;

export type ExceptionRequested = Event<'ExceptionRequested', { exception: LifetimeExceptionRecord }>;
/** An admin approved the exception: `approver` decided, `at` when. */
export type ExceptionApproved = Event<
  'ExceptionApproved',
  { id: string; approver: string; previousState: LifetimeExceptionState; at: string }
>;
export type ExceptionRejected = Event<
  'ExceptionRejected',
  { id: string; approver: string; previousState: LifetimeExceptionState; at: string }
>;

export type LifetimeExceptionEvent = ExceptionRequested | ExceptionApproved | ExceptionRejected;

export const LIFETIME_EXCEPTION_EVENT_TYPES = eventTypes<LifetimeExceptionEvent>({
  ExceptionRequested: true,
  ExceptionApproved: true,
  ExceptionRejected: true,
});

export type LiveLifetimeException = Readonly<{
  status: 'Live';
  record: LifetimeExceptionRecord;
  state: LifetimeExceptionState;
  /** Who approved or rejected it last, and when; null while it waits. */
  decidedBy: string | null;
  decidedAt: string | null;
}>;

export type LifetimeException = Readonly<{ status: 'Absent' }> | LiveLifetimeException;

export const initialLifetimeException = (): LifetimeException => ({ status: 'Absent' });

export const evolveLifetimeException = (state: LifetimeException, event: LifetimeExceptionEvent): LifetimeException => {
  if (event.type === 'ExceptionRequested')
    return { status: 'Live', record: event.data.exception, state: 'WAITING', decidedBy: null, decidedAt: null };
  if (state.status !== 'Live') return state;
  switch (event.type) {
    case 'ExceptionApproved':
      return { ...state, state: 'APPROVED', decidedBy: event.data.approver, decidedAt: event.data.at };
    case 'ExceptionRejected':
      return { ...state, state: 'REJECTED', decidedBy: event.data.approver, decidedAt: event.data.at };
    default:
      return state;
  }
};

/**
 * The state an approval names: a letter (`A`, `R`, as the specification gives them) or a name.
 * Rucio 39 compares the text with its enum's members, so it never matches (always
 * UnsupportedOperation); what it means is taken here. Anything else is UnsupportedOperation.
 */
export const exceptionStateOf = (given: unknown): LifetimeExceptionState | undefined => {
  if (typeof given !== 'string') return undefined;
  return (
    LIFETIME_EXCEPTION_STATE_LETTERS[given] ?? LIFETIME_EXCEPTION_STATES.find((state) => state === given.toUpperCase())
  );
};
