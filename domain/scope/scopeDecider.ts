import type { Decider } from '../shared/decider.ts';
import { Duplicate } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { assertScopeAllowed, type NameSchema } from '../shared/names.ts';
import { evolveScope, initialScope, type Scope, type ScopeEvent } from './scope.ts';

/**
 * The owning account's existence is checked by the command handler before deciding; the scope must
 * follow the configured policy schema (`policy.schema`).
 */
export type AddScope = Command<'AddScope', { scope: string; account: string; nameSchema: NameSchema }>;
export type ScopeCommand = AddScope;

export const addScope = ({ data, metadata }: AddScope, state: Scope): ScopeEvent[] => {
  assertScopeAllowed(data.nameSchema, data.scope);
  if (state.status !== 'Absent') throw new Duplicate(`Scope '${data.scope}' already exists!`);
  return [
    { type: 'ScopeAdded', data: { scope: data.scope, account: data.account, addedAt: metadata.now.toISOString() } },
  ];
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

export const scopeDecider: Decider<Scope, ScopeCommand, ScopeEvent> = {
  name: 'scope',
  initialState: initialScope,
  evolve: evolveScope,
  decide: decideScope,
};
