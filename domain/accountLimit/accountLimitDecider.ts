import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import {
  evolveAccountLimits,
  initialAccountLimits,
  type AccountLimitEvent,
  type AccountLimits,
} from './accountLimit.ts';

export type SetLocalAccountLimit = Command<
  'SetLocalAccountLimit',
  { account: string; rseId: string; rse: string; bytes: number }
>;
export type RemoveLocalAccountLimit = Command<
  'RemoveLocalAccountLimit',
  { account: string; rseId: string; rse: string }
>;
export type SetGlobalAccountLimit = Command<
  'SetGlobalAccountLimit',
  { account: string; rseExpression: string; bytes: number }
>;
export type RemoveGlobalAccountLimit = Command<'RemoveGlobalAccountLimit', { account: string; rseExpression: string }>;

export type AccountLimitCommand =
  SetLocalAccountLimit | RemoveLocalAccountLimit | SetGlobalAccountLimit | RemoveGlobalAccountLimit;

/** Setting is an upsert; the same value again changes nothing. */
export const setLocalAccountLimit = ({ data }: SetLocalAccountLimit, state: AccountLimits): AccountLimitEvent[] =>
  state.local[data.rseId] === data.bytes ? [] : [{ type: 'LocalAccountLimitSet', data }];

/** Removing a limit that is not set is no error in Rucio (it answers whether a row existed). */
export const removeLocalAccountLimit = (
  { data }: RemoveLocalAccountLimit,
  state: AccountLimits,
): AccountLimitEvent[] => (data.rseId in state.local ? [{ type: 'LocalAccountLimitRemoved', data }] : []);

export const setGlobalAccountLimit = ({ data }: SetGlobalAccountLimit, state: AccountLimits): AccountLimitEvent[] =>
  state.global[data.rseExpression] === data.bytes ? [] : [{ type: 'GlobalAccountLimitSet', data }];

export const removeGlobalAccountLimit = (
  { data }: RemoveGlobalAccountLimit,
  state: AccountLimits,
): AccountLimitEvent[] => (data.rseExpression in state.global ? [{ type: 'GlobalAccountLimitRemoved', data }] : []);

export const decideAccountLimits = (command: AccountLimitCommand, state: AccountLimits): AccountLimitEvent[] => {
  switch (command.type) {
    case 'SetLocalAccountLimit':
      return setLocalAccountLimit(command, state);
    case 'RemoveLocalAccountLimit':
      return removeLocalAccountLimit(command, state);
    case 'SetGlobalAccountLimit':
      return setGlobalAccountLimit(command, state);
    case 'RemoveGlobalAccountLimit':
      return removeGlobalAccountLimit(command, state);
    default:
      return unknownCommand('account limit', command);
  }
};

export const accountLimitsDecider: Decider<AccountLimits, AccountLimitCommand, AccountLimitEvent> = {
  name: 'accountLimits',
  initialState: initialAccountLimits,
  evolve: evolveAccountLimits,
  decide: decideAccountLimits,
};
