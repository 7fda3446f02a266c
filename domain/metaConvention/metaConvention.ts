import type { DidType } from '../did/did.ts';
import { InvalidValueForKey } from '../shared/errors.ts';
import type { Event } from '../shared/event.ts';

/**
 * Metadata conventions (Rucio's `did_keys` / `did_key_map`): keys with the DID types they apply
 * to, an optional value type and pattern, and optionally a list of allowed values. One stream per
 * key. Rucio only checks `datatype` of new datasets against them; here every metadata write is
 * checked against the convention of each key it sets (didMetadata.ts).
 */

export const KEY_TYPES = ['ALL', 'COLLECTION', 'CONTAINER', 'DATASET', 'FILE', 'DERIVED'] as const;
export type KeyType = (typeof KEY_TYPES)[number];
export type ValueType = 'int' | 'float' | 'str';

export const metaConventionStreamName = (key: string): string => `metaconvention-${key}`;

export type MetaConventionKeyAdded = Event<
  'MetaConventionKeyAdded',
  { key: string; keyType: KeyType; valueType: ValueType | null; valueRegexp: string | null; addedAt: string }
>;
export type MetaConventionValueAdded = Event<
  'MetaConventionValueAdded',
  { key: string; value: string; addedAt: string }
>;
export type MetaConventionEvent = MetaConventionKeyAdded | MetaConventionValueAdded;
/** Every metadata convention event type, each once: a type added to the union and missing here does not compile. */
export const META_CONVENTION_EVENT_TYPES = {
  MetaConventionKeyAdded: true,
  MetaConventionValueAdded: true,
} as const satisfies Readonly<Record<MetaConventionEvent['type'], true>>;

export type MetaConvention = Readonly<{
  key: string;
  keyType: KeyType;
  valueType: ValueType | null;
  valueRegexp: string | null;
  values: readonly string[];
}>;

export type MetaConventionState = Readonly<{ status: 'Absent' }> | (Readonly<{ status: 'Defined' }> & MetaConvention);

export const initialMetaConvention = (): MetaConventionState => ({ status: 'Absent' });

export const evolveMetaConvention = (state: MetaConventionState, event: MetaConventionEvent): MetaConventionState => {
  switch (event.type) {
    case 'MetaConventionKeyAdded':
      return {
        status: 'Defined',
        key: event.data.key,
        keyType: event.data.keyType,
        valueType: event.data.valueType,
        valueRegexp: event.data.valueRegexp,
        values: [],
      };
    case 'MetaConventionValueAdded':
      return state.status === 'Defined' ? { ...state, values: [...state.values, event.data.value] } : state;
    default:
      return state;
  }
};

/**
 * Checks a metadata value against its key's convention: the DID type the key applies to, the
 * value type, the pattern (matched from the start, as Python's `re.match`) and, when the key
 * lists allowed values, membership.
 */
export const checkConvention = (convention: MetaConvention, didType: DidType, value: unknown): void => {
  if (!keyTypeAllows(convention.keyType, didType)) {
    throw new InvalidValueForKey(
      `The key ${convention.key} does not apply to a ${didType} (key type ${convention.keyType})`,
    );
  }
  if (value === null) return;
  const text = String(value);
  if (convention.valueType !== null && !hasValueType(value, convention.valueType)) {
    throw new InvalidValueForKey(
      `The value ${text} for the key ${convention.key} does not match the required type ${convention.valueType}`,
    );
  }
  if (convention.valueRegexp !== null && !matchesFromStart(convention.valueRegexp, text)) {
    throw new InvalidValueForKey(
      `The value ${text} for the key ${convention.key} does not match the regular expression ${convention.valueRegexp}`,
    );
  }
  if (convention.values.length > 0 && !convention.values.includes(text)) {
    throw new InvalidValueForKey(
      `The value ${text} for the key ${convention.key} is not one of the allowed values ${JSON.stringify(convention.values)}`,
    );
  }
};

const keyTypeAllows = (keyType: KeyType, didType: DidType): boolean => {
  switch (keyType) {
    case 'ALL':
    case 'DERIVED':
      return true;
    case 'COLLECTION':
      return didType !== 'FILE';
    default:
      return keyType === didType;
  }
};

export const hasValueType = (value: unknown, valueType: ValueType): boolean => {
  switch (valueType) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number';
    case 'str':
      return typeof value === 'string';
  }
};

export const compiles = (pattern: string): boolean => {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
};

export const matchesFromStart = (pattern: string, text: string): boolean => new RegExp(pattern, 'y').test(text);
