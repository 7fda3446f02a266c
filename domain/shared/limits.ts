import { InvalidObject } from './errors.ts';
import { CONTROL_CHARACTERS } from './names.ts';

/**
 * Bounds on what clients may store, one place for all of them: Rucio's where its schema or its
 * database columns have one (lib/rucio/common/schema/generic.py, lib/rucio/db/sqla/models.py),
 * a documented one where Rucio has none (docs/security.md). Names (accounts, scopes, DIDs, RSEs)
 * are bounded by their patterns in names.ts.
 */
export const LIMITS = {
  /** Seconds a lifetime may reach either way (about a century); beyond, a date leaves every store's range. */
  lifetimeSeconds: 100 * 365 * 86_400,
  /** Rucio's `email` columns: String(255). */
  emailLength: 255,
  /** Rucio's `identity` column: String(2048) (an X.509 DN can be long). */
  identityLength: 2048,
  /** None in Rucio (it stores a hash); scrypt reads all of it. */
  passwordLength: 1024,
  /** Rucio's `config.section` / `config.opt`: String(128); `config.value`: String(4000). */
  configKeyLength: 128,
  configValueLength: 4000,
  /** Rucio's DID metadata keys (`did_keys.key`): String(255); JSON values have no bound in Rucio: 4000 characters of JSON here. */
  metadataKeyLength: 255,
  metadataValueLength: 4000,
  /** Rucio's `rse_attr_map.key` / `.value`: String(255). */
  rseAttributeKeyLength: 255,
  rseAttributeValueLength: 255,
  /** Rucio's RSE text columns (city, country_name, time_zone, ISP, ASN): String(255). */
  rseTextLength: 255,
  /** An open data entry's metadata document: a JSON column without bound in Rucio; 64 KiB of JSON here. */
  opendataMetaLength: 65_536,
} as const;

/** Whether `value` is a lifetime in seconds within bounds (finite, at most a century either way). */
export const isLifetime = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= LIMITS.lifetimeSeconds;

/**
 * A text a client stores (an email, an identity, a value): at most `maxLength` characters, and,
 * unless `multiline`, no control characters. Refused whole with InvalidObject, never cut.
 */
export const checkText = (
  what: string,
  value: string,
  maxLength: number,
  options: { multiline?: boolean } = {},
): string => {
  if (value.length > maxLength)
    throw new InvalidObject(`Problem validating ${what}: it is longer than ${maxLength} characters`);
  if (!options.multiline && CONTROL_CHARACTERS.test(value))
    throw new InvalidObject(`Problem validating ${what}: it holds control characters`);
  return value;
};
