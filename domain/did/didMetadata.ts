import { isLifetime, LIMITS } from '../shared/limits.ts';
import { keyProblem } from '../shared/names.ts';
import { parseFilterDate, parseRucioDate } from '../shared/dates.ts';
import { AccessDenied, InvalidMetadata, InvalidValueForKey, UnsupportedOperation } from '../shared/errors.ts';
import { checkConvention, type MetaConvention } from '../metaConvention/metaConvention.ts';
import type { ColumnValue, DidEvent, DidRef, DidType } from './did.ts';

/**
 * Rucio's metadata plugins (lib/rucio/core/did_meta_plugins): `DID_COLUMN` owns the columns of the
 * `dids` table (minus a few), `JSON` owns every other key. A key is handled by the first plugin
 * that manages it, so a metadata write splits into column values and JSON values.
 */

/** Every column of Rucio's `dids` table, in table order. */
export const DID_COLUMNS = [
  'scope',
  'name',
  'account',
  'did_type',
  'is_open',
  'monotonic',
  'hidden',
  'obsolete',
  'complete',
  'is_new',
  'availability',
  'suppressed',
  'bytes',
  'length',
  'md5',
  'adler32',
  'expired_at',
  'purge_replicas',
  'deleted_at',
  'events',
  'guid',
  'project',
  'datatype',
  'run_number',
  'stream_name',
  'prod_step',
  'version',
  'campaign',
  'task_id',
  'panda_id',
  'lumiblocknr',
  'provenance',
  'phys_group',
  'transient',
  'accessed_at',
  'closed_at',
  'eol_at',
  'is_archive',
  'constituent',
  'access_cnt',
  'created_at',
  'updated_at',
] as const;

const NOT_MANAGED_COLUMNS = new Set([
  'account',
  'availability',
  'complete',
  'created_at',
  'did_type',
  'is_open',
  'monotonic',
  'obsolete',
  'scope',
  'suppressed',
  'updated_at',
]);

/** Keys DID_COLUMN manages without a column: they only mean something in searches (or `lifetime`). */
const VIRTUAL_KEYS = [
  'lifetime',
  'created_before',
  'created_after',
  'length.gt',
  'length.lt',
  'length.gte',
  'length.lte',
  'type',
];

const DID_COLUMN_KEYS: ReadonlySet<string> = new Set([
  ...DID_COLUMNS.filter((column) => !NOT_MANAGED_COLUMNS.has(column)),
  ...VIRTUAL_KEYS,
]);

/** Whether the DID_COLUMN plugin owns a key; the JSON plugin owns all the others. */
export const managedByDidColumn = (key: string): boolean => DID_COLUMN_KEYS.has(key);

/** Keys no user may write (lib/rucio/common/constants.py `RESERVED_KEYS`). */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  'scope',
  'name',
  'account',
  'did_type',
  'is_open',
  'monotonic',
  'obsolete',
  'complete',
  'availability',
  'suppressed',
  'bytes',
  'length',
  'md5',
  'adler32',
  'rule_evaluation_action',
  'rule_evaluation_required',
  'expired_at',
  'deleted_at',
  'created_at',
  'updated_at',
]);

/** The Python client's names for the metadata plugins, matched without regard to case. */
export type MetadataPlugin = 'DID_COLUMN' | 'JSON' | 'ALL';

export const metadataPluginNamed = (name: string): MetadataPlugin | undefined => {
  const upper = name.toUpperCase();
  return upper === 'DID_COLUMN' || upper === 'JSON' || upper === 'ALL' ? upper : undefined;
};

type ColumnKind =
  | { kind: 'boolean' }
  | { kind: 'integer' }
  | { kind: 'string'; maxLength: number }
  | { kind: 'date' }
  | { kind: 'guid' };

/** What each writable column holds (lib/rucio/db/sqla/models.py); the others refuse writes. */
const WRITABLE_COLUMNS: Readonly<Record<string, ColumnKind & { nullable: boolean }>> = {
  hidden: { kind: 'boolean', nullable: false },
  is_new: { kind: 'boolean', nullable: true },
  purge_replicas: { kind: 'boolean', nullable: false },
  transient: { kind: 'boolean', nullable: false },
  is_archive: { kind: 'boolean', nullable: true },
  constituent: { kind: 'boolean', nullable: true },
  events: { kind: 'integer', nullable: true },
  run_number: { kind: 'integer', nullable: true },
  task_id: { kind: 'integer', nullable: true },
  panda_id: { kind: 'integer', nullable: true },
  lumiblocknr: { kind: 'integer', nullable: true },
  access_cnt: { kind: 'integer', nullable: true },
  project: { kind: 'string', maxLength: 50, nullable: true },
  datatype: { kind: 'string', maxLength: 50, nullable: true },
  stream_name: { kind: 'string', maxLength: 70, nullable: true },
  prod_step: { kind: 'string', maxLength: 50, nullable: true },
  version: { kind: 'string', maxLength: 50, nullable: true },
  campaign: { kind: 'string', maxLength: 50, nullable: true },
  provenance: { kind: 'string', maxLength: 2, nullable: true },
  phys_group: { kind: 'string', maxLength: 25, nullable: true },
  accessed_at: { kind: 'date', nullable: true },
  closed_at: { kind: 'date', nullable: true },
  eol_at: { kind: 'date', nullable: true },
  guid: { kind: 'guid', nullable: true },
};

/** Columns only files have; Rucio refuses them on collections. */
const FILE_ONLY_COLUMNS = new Set(['guid', 'events']);

/** Columns whose change Rucio carries to other tables, never to children with `recursive`. */
const NOT_RECURSIVE_COLUMNS = new Set(['expired_at', 'eol_at', 'guid', 'events']);

/**
 * `.` separates a key from its operator in searches, so keys may not contain it; nor may they be
 * empty, too long, hold control characters, name a prototype property or start with `$`.
 */
export const assertKeyCharacters = (key: string): void => {
  const problem = keyProblem(key, LIMITS.metadataKeyLength);
  if (problem) throw new InvalidMetadata(`The metadata key ${JSON.stringify(key.slice(0, 100))} ${problem}.`);
  if (key.includes('.')) {
    throw new InvalidMetadata(
      'Restricted character "." found in metadata key. Reason: Used as a delimiter for key and operator (<key>.<operator>) in filtering engine.',
    );
  }
};

/** The gateway's refusal of reserved keys, with its two wordings (one key, several keys). */
export const assertNotReserved = (
  meta: Readonly<Record<string, unknown>>,
  issuer: string,
  scope: string,
  name: string,
  single: boolean,
): void => {
  for (const key of Object.keys(meta)) {
    if (!RESERVED_KEYS.has(key)) continue;
    throw new AccessDenied(
      single
        ? `Account ${issuer} can not change this metadata value to data identifier ${scope}:${name}`
        : `Account ${issuer} can not change the value of the metadata key ${key} to data identifier ${scope}:${name}`,
    );
  }
};

export type MetadataChange = Readonly<{
  columns: Readonly<Record<string, ColumnValue>>;
  json: Readonly<Record<string, unknown>>;
  /** The plain column values `recursive` copies to direct children. */
  recursiveColumns: Readonly<Record<string, ColumnValue>>;
}>;

/** The event that records a planned change of a DID's metadata, made at `now`. */
export const metadataSetEvent = (did: DidRef, change: MetadataChange, now: Date): DidEvent => ({
  type: 'DidMetadataSet',
  data: { scope: did.scope, name: did.name, columns: change.columns, json: change.json, setAt: now.toISOString() },
});

/**
 * Splits `meta` between the two plugins and turns column values into what the columns hold:
 * `lifetime` (seconds from `now`, or null) becomes `expired_at`, dates become ISO strings. Every
 * value is checked against its key's metadata convention, when one exists.
 */
export const planMetadataChange = (
  target: { scope: string; name: string; didType: DidType },
  meta: Readonly<Record<string, unknown>>,
  now: Date,
  conventions: ReadonlyMap<string, MetaConvention>,
): MetadataChange => {
  const columns: Record<string, ColumnValue> = {};
  const json: Record<string, unknown> = {};
  const recursiveColumns: Record<string, ColumnValue> = {};
  const refused: string[] = [];
  for (const [key, value] of Object.entries(meta)) {
    assertKeyCharacters(key);
    if (value !== undefined && JSON.stringify(value).length > LIMITS.metadataValueLength) {
      throw new InvalidValueForKey(
        `The value of key ${key} is longer than ${LIMITS.metadataValueLength} characters of JSON`,
      );
    }
    const convention = conventions.get(key);
    if (convention) checkConvention(convention, target.didType, value);
    if (!managedByDidColumn(key)) {
      json[key] = value;
      continue;
    }
    if (key === 'lifetime') {
      columns.expired_at = expiryFromLifetime(value, now);
      continue;
    }
    const column = WRITABLE_COLUMNS[key];
    if (!column) {
      refused.push(key);
      continue;
    }
    if (FILE_ONLY_COLUMNS.has(key) && target.didType !== 'FILE') {
      throw new UnsupportedOperation(`${key} for ${target.scope}:${target.name} cannot be updated`);
    }
    columns[key] = columnValue(key, column, value);
    if (!NOT_RECURSIVE_COLUMNS.has(key)) recursiveColumns[key] = columns[key]!;
  }
  if (refused.length > 0) {
    throw new InvalidMetadata(`Some of the keys are not accepted: [${refused.map((key) => `'${key}'`).join(', ')}]`);
  }
  return { columns, json, recursiveColumns };
};

const expiryFromLifetime = (value: unknown, now: Date): string | null => {
  if (value === null) return null;
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (!isLifetime(seconds)) {
    throw new InvalidValueForKey(
      `Value ${JSON.stringify(value)} of key lifetime is not a number of seconds (at most ${LIMITS.lifetimeSeconds} either way)`,
    );
  }
  return new Date(now.getTime() + seconds * 1000).toISOString();
};

const columnValue = (key: string, column: ColumnKind & { nullable: boolean }, value: unknown): ColumnValue => {
  const refuse = (what: string): never => {
    throw new InvalidValueForKey(`Value ${JSON.stringify(value)} of key ${key} is not ${what}`);
  };
  if (value === null || value === undefined) return column.nullable ? null : refuse('allowed to be null');
  switch (column.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? value : refuse('a boolean');
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) ? value : refuse('an integer');
    case 'string':
      if (typeof value !== 'string') return refuse('a string');
      return value.length <= column.maxLength ? value : refuse(`a string of at most ${column.maxLength} characters`);
    case 'date': {
      const date =
        typeof value === 'string' ? (parseDay(value) ?? parseFilterDate(value) ?? parseRucioDate(value)) : undefined;
      return date ? date.toISOString() : refuse('a date');
    }
    case 'guid': {
      const guid = typeof value === 'string' ? normalizeGuid(value) : undefined;
      return guid ?? refuse('a UUID');
    }
  }
};

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD`, the form Rucio documents for `eol_at`. */
const parseDay = (text: string): Date | undefined => {
  const match = DAY.exec(text);
  if (!match) return undefined;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.getUTCDate() === Number(match[3]) && date.getUTCMonth() === Number(match[2]) - 1 ? date : undefined;
};

const UUID = /^\{?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})\}?$/;

/** Rucio stores GUIDs as 32 lower-case hex digits whatever form they came in. */
export const normalizeGuid = (text: string): string | undefined => {
  const match = UUID.exec(text);
  return match ? match.slice(1).join('').toLowerCase() : undefined;
};
