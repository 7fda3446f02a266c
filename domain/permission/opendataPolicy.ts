import { isAdmin, type ScopeAccess } from './policy.ts';

/**
 * Who may change the open data catalogue. Rucio 39 asks nothing beyond a valid token (its gateway
 * has no permission check for open data), so any account could publish, suspend or re-label any
 * DID; here changing an entry is for admins and the owner of the DID's scope, as setting the DID's
 * own metadata is (docs/compatibility.md). Reading is for every account, and the public routes for
 * anyone.
 */
export const OPENDATA_PERMISSIONS = {
  write: (access: ScopeAccess) =>
    isAdmin(access.caller) || (access.scopeOwner !== undefined && access.scopeOwner === access.caller.account),
} as const;
