import { isAdmin } from './policy.ts';

/**
 * The generic policy for subscriptions and lifetime exceptions (lib/rucio/core/permission/
 * generic.py): adding and updating subscriptions is for admins, as is approving or rejecting a
 * lifetime exception; any authenticated account may ask for an exception and read them all.
 */
export const SUBSCRIPTION_PERMISSIONS = {
  addSubscription: isAdmin,
  updateSubscription: isAdmin,
  /** Our own route: what dry-run subscriptions would have made. */
  listDryRuns: isAdmin,
} as const;

export const LIFETIME_EXCEPTION_PERMISSIONS = {
  updateException: isAdmin,
} as const;
