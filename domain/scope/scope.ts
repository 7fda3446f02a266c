import { eventTypes, type Event } from '../shared/event.ts';

export const scopeStreamName = (scope: string): string => `scope-${scope}`;

export type ScopeAdded = Event<'ScopeAdded', { scope: string; account: string; addedAt: string }>;
export type ScopeEvent = ScopeAdded;

export const SCOPE_EVENT_TYPES = eventTypes<ScopeEvent>({ ScopeAdded: true });

export type Scope = { status: 'Absent' } | { status: 'OPEN'; scope: string; account: string };

export const initialScope = (): Scope => ({ status: 'Absent' });

export const evolveScope = (state: Scope, event: ScopeEvent): Scope => {
  switch (event.type) {
    case 'ScopeAdded':
      return { status: 'OPEN', scope: event.data.scope, account: event.data.account };
    default:
      return state;
  }
};
