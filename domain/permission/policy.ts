import { AccessDenied } from '../shared/errors.ts';

/**
 * Rucio's generic permission policy (lib/rucio/core/permission/generic.py). "Admin" means the
 * root account or any account carrying an `admin` attribute, whatever its value.
 */
export type Caller = Readonly<{
  account: string;
  /** Names of the caller's account attributes; `admin` among them makes the caller an admin. */
  attributes: Readonly<Record<string, string>>;
}>;

export const isRoot = (caller: Caller): boolean => caller.account === 'root';

export const isAdmin = (caller: Caller): boolean => isRoot(caller) || 'admin' in caller.attributes;

/** Throws AccessDenied with Rucio's wording unless `allowed`. */
export const requirePermission = (allowed: boolean, caller: Caller, what: string): void => {
  if (!allowed) throw new AccessDenied(`Account ${caller.account} can not ${what}.`);
};

export const ACCOUNT_PERMISSIONS = {
  addAccount: isRoot,
  deleteAccount: isRoot,
  updateAccount: isAdmin,
  addAttribute: isAdmin,
  deleteAttribute: isAdmin,
  addIdentity: isAdmin,
  deleteIdentity: isAdmin,
  addScope: isAdmin,
  config: isAdmin,
  /** Our own route (`DELETE /admin/accounts/{account}/tokens`); Rucio has none. */
  revokeSessions: isAdmin,
} as const satisfies Record<string, (caller: Caller) => boolean>;

/** Throws AccessDenied with the exact message of the Rucio gateway function at hand. */
export const allowOnly = (allowed: boolean, message: string): void => {
  if (!allowed) throw new AccessDenied(message);
};

/** The facts DID permissions look at: the caller and the owner of the scope concerned. */
export type ScopeAccess = Readonly<{ caller: Caller; scope: string; scopeOwner: string | undefined }>;

const ownsScope = ({ caller, scopeOwner }: ScopeAccess): boolean =>
  scopeOwner !== undefined && scopeOwner === caller.account;

/** Anyone may write into the scope called `mock` (Rucio's test scope). */
const isMockScope = ({ scope }: ScopeAccess): boolean => scope === 'mock';

export const DID_PERMISSIONS = {
  /** add_did(s), attach, detach (on the parent's scope), create_did_sample (on the output scope). */
  writeCollection: (access: ScopeAccess) => isAdmin(access.caller) || ownsScope(access) || isMockScope(access),
  /** attach_dids_to_dids: the owner of every parent scope. */
  attachToMany: (caller: Caller, accesses: readonly ScopeAccess[]) => isAdmin(caller) || accesses.every(ownsScope),
  setMetadata: (access: ScopeAccess) => isAdmin(access.caller) || ownsScope(access),
  /** Reopening is meant to be for admins only (Rucio's policy says so; its gateway forgets to ask). */
  setStatus: (access: ScopeAccess, reopening: boolean) => isAdmin(access.caller) || (!reopening && ownsScope(access)),
  resurrect: isAdmin,
  /** Following and unfollowing for oneself; admins for anyone; anyone in the `mock` scope. */
  follow: (access: ScopeAccess, follower: string) =>
    isAdmin(access.caller) || follower === access.caller.account || isMockScope(access),
  metaConventions: isAdmin,
} as const;
