import { isAdmin, type Caller } from './policy.ts';

/**
 * The generic policy for rules (lib/rucio/core/permission/generic.py): anyone may add an unlocked
 * rule owned by himself; locked rules and rules for other owners are for admins, as are every
 * change, deletion, approval, reduction and move of a rule.
 */
export const RULE_PERMISSIONS = {
  addRule: (caller: Caller, rule: Readonly<{ account: string; locked: boolean }>) =>
    isAdmin(caller) || (rule.account === caller.account && !rule.locked),
  updateRule: isAdmin,
  deleteRule: isAdmin,
  approveRule: isAdmin,
  reduceRule: isAdmin,
  moveRule: isAdmin,
} as const;
