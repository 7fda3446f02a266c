import { isAdmin, isRoot, type Caller } from './policy.ts';

/**
 * The generic policy for storage elements and quotas (lib/rucio/core/permission/generic.py).
 * Everything that changes an RSE is for admins; setting usage and exporting are for root only.
 */
export const RSE_PERMISSIONS = {
  addRse: isAdmin,
  updateRse: isAdmin,
  deleteRse: isAdmin,
  addAttribute: isAdmin,
  deleteAttribute: isAdmin,
  addProtocol: isAdmin,
  updateProtocol: isAdmin,
  deleteProtocol: isAdmin,
  addQosPolicy: isAdmin,
  deleteQosPolicy: isAdmin,
  setUsage: isRoot,
  setLimits: isAdmin,
  deleteLimits: isAdmin,
  addDistance: isAdmin,
  updateDistance: isAdmin,
  deleteDistance: isAdmin,
  importData: isAdmin,
  exportData: isRoot,
} as const satisfies Record<string, (caller: Caller) => boolean>;

/** Countries whose RSEs the caller administers: attributes `country-<X>` with the value `admin`. */
export const administeredCountries = (caller: Caller): Set<string> =>
  new Set(
    Object.entries(caller.attributes)
      .filter(([key, value]) => key.startsWith('country-') && value === 'admin')
      .map(([key]) => key.slice('country-'.length)),
  );

/** Local limits: admins, or a country admin for an RSE whose `country` attribute is theirs. */
export const mayManageLocalLimit = (caller: Caller, rseCountry: unknown): boolean =>
  isAdmin(caller) || (typeof rseCountry === 'string' && administeredCountries(caller).has(rseCountry));

/** Global limits: admins, or a country admin of the country of every RSE the expression selects. */
export const mayManageGlobalLimit = (caller: Caller, rseCountries: readonly unknown[]): boolean => {
  if (isAdmin(caller)) return true;
  const countries = administeredCountries(caller);
  return countries.size > 0 && rseCountries.every((country) => typeof country === 'string' && countries.has(country));
};

/** Usage: admins, the account itself, or any country admin. */
export const mayReadAccountUsage = (caller: Caller, account: string): boolean =>
  isAdmin(caller) || caller.account === account || administeredCountries(caller).size > 0;
