import { isAdmin, isRoot, type Caller, type ScopeAccess } from './policy.ts';

/**
 * Who may read the history and run the projections (our own `/audit` and `/admin` prefixes; Rucio
 * has neither): admins (and root) read every history; the owner of a scope reads the history and
 * past states of its DIDs. Rebuilding a projection is root's alone: it replays the whole log.
 */
export const AUDIT_PERMISSIONS = {
  readDidHistory: (access: ScopeAccess): boolean =>
    isAdmin(access.caller) || (access.scopeOwner !== undefined && access.scopeOwner === access.caller.account),
  readHistory: (caller: Caller): boolean => isAdmin(caller),
  readProjections: (caller: Caller): boolean => isAdmin(caller),
  rebuildProjection: (caller: Caller): boolean => isRoot(caller),
};
