import { isAdmin, isRoot, type Caller } from './policy.ts';

/**
 * Who may look at the machinery (our own `/admin` and `/audit` routes; Rucio has none): admins
 * read the daemons' queues and the transfers' status, and verify the event log's hash chains
 * (it reads the whole log, as `dms audit verify` does, but changes nothing).
 */
export const OPERATIONS_PERMISSIONS = {
  readDaemons: (caller: Caller): boolean => isAdmin(caller),
  readTransfers: (caller: Caller): boolean => isAdmin(caller),
  verifyEventLog: (caller: Caller): boolean => isAdmin(caller),
};

/** What the console shows a caller: the pages of admins, and root's own actions (a rebuild). */
export const consoleRoles = (caller: Caller): Readonly<{ admin: boolean; root: boolean }> => ({
  admin: isAdmin(caller),
  root: isRoot(caller),
});
