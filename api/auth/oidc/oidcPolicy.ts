import { SETTINGS, settingValue, type ConfigSections } from '../../../domain/config/settings.ts';
import { configSection } from '../../../projections/config/configQueries.ts';
import type { ReadModels } from '../../../projections/runtime/readModels.ts';
import type { KeyPolicy } from './trustedIssuers.ts';

/** The `oidc` section of /config, as the token checks and the login flow read it. */
export type OidcPolicy = KeyPolicy &
  Readonly<{
    /** Every one of these must be in a token's `aud`. */
    audience: readonly string[];
    /** Every one of these must be in a token's `scope`. */
    scope: readonly string[];
  }>;

const words = (text: string): string[] => text.split(' ').filter(Boolean);

export const oidcPolicy = async (readModels: ReadModels): Promise<OidcPolicy> => {
  const section = await configSection(readModels, 'oidc');
  const sections: ConfigSections = section ? { oidc: section.options } : {};
  return {
    audience: words(settingValue(sections, SETTINGS.oidcExpectedAudience)),
    scope: words(settingValue(sections, SETTINGS.oidcExpectedScope)),
    refreshIntervalMs: settingValue(sections, SETTINGS.oidcJwksRefreshInterval) * 1000,
    maxAgeMs: settingValue(sections, SETTINGS.oidcJwksMaxAge) * 1000,
  };
};

/**
 * Rucio's `all_oidc_req_claims_present`, one half of it: every required item is among the
 * presented ones, which come as a space-separated string or a list.
 */
export const containsAll = (presented: unknown, required: readonly string[]): boolean => {
  const items = Array.isArray(presented)
    ? presented.map(String)
    : typeof presented === 'string'
      ? words(presented)
      : [];
  return required.every((item) => items.includes(item));
};

/** Rucio's OIDC identity string. */
export const oidcIdentity = (sub: string, issuer: string): string => `SUB=${sub}, ISS=${issuer}`;
