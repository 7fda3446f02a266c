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
} as const satisfies Record<string, (caller: Caller) => boolean>;
