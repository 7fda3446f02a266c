import type { Command, Event } from '../shared/event.ts';
import { Duplicate } from '../shared/errors.ts';

export const scopeStreamName = (scope: string): string => `scope-${scope}`;

export type ScopeAdded = Event<'ScopeAdded', { scope: string; account: string; addedAt: string }>;
export type ScopeEvent = ScopeAdded;

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

/** The owning account's existence is checked by the command handler before deciding. */
export type AddScope = Command<'AddScope', { scope: string; account: string }>;
export type ScopeCommand = AddScope;

export const addScope = ({ data, metadata }: AddScope, state: Scope): ScopeEvent[] => {
  if (state.status !== 'Absent') throw new Duplicate(`Scope '${data.scope}' already exists!`);
  return [{ type: 'ScopeAdded', data: { scope: data.scope, account: data.account, addedAt: metadata.now.toISOString() } }];
};

export const decideScope = (command: ScopeCommand, state: Scope): ScopeEvent[] => {
  switch (command.type) {
    case 'AddScope':
      return addScope(command, state);
    default: {
      const unknown: never = command.type;
      throw new Error(`Unknown scope command ${String(unknown)}`);
    }
  }
};

export const scopeDecider = { name: 'scope', initialState: initialScope, evolve: evolveScope, decide: decideScope };
