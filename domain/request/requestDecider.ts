import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import { evolveRequest, initialRequest, type Request, type RequestEvent, type RequestRecord, type RequestState } from './request.ts';

/** Queues a new request; `state` is QUEUED, or PREPARING when the preparer chooses sources first. */
export type QueueRequest = Command<'QueueRequest', { request: RequestRecord; state: RequestState }>;
/** Cancels a request that has not finished; a finished or absent one is left as it is. */
export type CancelRequest = Command<'CancelRequest', { requestId: string; reason: string }>;

export type RequestCommand = QueueRequest | CancelRequest;

export const queueRequest = ({ data }: QueueRequest, state: Request): RequestEvent[] =>
  state.status === 'Absent' ? [{ type: 'RequestQueued', data: { request: data.request, state: data.state } }] : [];

export const cancelRequest = ({ data, metadata }: CancelRequest, state: Request): RequestEvent[] => {
  if (state.status !== 'Active') return [];
  const { scope, name, destRseId } = state.record;
  return [
    {
      type: 'RequestCancelled',
      data: { requestId: data.requestId, scope, name, destRseId, previousState: state.state, reason: data.reason, cancelledAt: metadata.now.toISOString() },
    },
  ];
};

export const decideRequest = (command: RequestCommand, state: Request): RequestEvent[] => {
  switch (command.type) {
    case 'QueueRequest':
      return queueRequest(command, state);
    case 'CancelRequest':
      return cancelRequest(command, state);
    default:
      return unknownCommand('request', command);
  }
};

export const requestDecider: Decider<Request, RequestCommand, RequestEvent> = {
  name: 'request',
  initialState: initialRequest,
  evolve: evolveRequest,
  decide: decideRequest,
};
