import { isAdmin, isRoot, type Caller } from './policy.ts';

/**
 * Heartbeats (Rucio's `list_heartbeats` and `send_heartbeats`): root lists them; root and the
 * admins send them (Rucio's default permission, since its policy names no rule of its own).
 */
export const HEARTBEAT_PERMISSIONS = {
  list: (caller: Caller): boolean => isRoot(caller),
  send: (caller: Caller): boolean => isAdmin(caller),
} as const satisfies Record<string, (caller: Caller) => boolean>;
