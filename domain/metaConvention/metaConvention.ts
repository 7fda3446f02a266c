import type { DidType } from '../did/did.ts';
import { Duplicate, InvalidObject, InvalidValueForKey, KeyNotFound, UnsupportedKeyType, UnsupportedValueType } from '../shared/errors.ts';
import type { Command, Event } from '../shared/event.ts';

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
export type MetaConventionValueAdded = Event<'MetaConventionValueAdded', { key: string; value: string; addedAt: string }>;
export type MetaConventionEvent = MetaConventionKeyAdded | MetaConventionValueAdded;
export const META_CONVENTION_EVENT_TYPES: readonly MetaConventionEvent['type'][] = ['MetaConventionKeyAdded', 'MetaConventionValueAdded'];

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
      return { status: 'Defined', key: event.data.key, keyType: event.data.keyType, valueType: event.data.valueType, valueRegexp: event.data.valueRegexp, values: [] };
    case 'MetaConventionValueAdded':
      return state.status === 'Defined' ? { ...state, values: [...state.values, event.data.value] } : state;
    default:
      return state;
  }
};

export type AddMetaConventionKey = Command<
  'AddMetaConventionKey',
  { key: string; keyType: unknown; valueType: unknown; valueRegexp: unknown }
>;
export type AddMetaConventionValue = Command<'AddMetaConventionValue', { key: string; value: unknown }>;
export type MetaConventionCommand = AddMetaConventionKey | AddMetaConventionValue;

/** Rucio compares `value_type` with `str(type)`, so the Python client sends `"<class 'str'>"`; bare names are taken too. */
const VALUE_TYPE_NAMES: Readonly<Record<string, ValueType>> = {
  "<class 'int'>": 'int',
  "<class 'float'>": 'float',
  "<class 'str'>": 'str',
  int: 'int',
  float: 'float',
  str: 'str',
};

/** Rucio also takes the DID type letters F, D and C for key types. */
const KEY_TYPE_LETTERS: Readonly<Record<string, KeyType>> = { F: 'FILE', D: 'DATASET', C: 'CONTAINER' };

export const addMetaConventionKey = ({ data, metadata }: AddMetaConventionKey, state: MetaConventionState): MetaConventionEvent[] => {
  let valueType: ValueType | null = null;
  if (data.valueType !== null && data.valueType !== undefined && data.valueType !== '') {
    valueType = VALUE_TYPE_NAMES[String(data.valueType)] ?? null;
    if (!valueType) throw new UnsupportedValueType(`The type '${String(data.valueType)}' is not supported for values!`);
  }
  // Python formats a missing key type as 'None'.
  const keyTypeText = data.keyType === null || data.keyType === undefined ? 'None' : String(data.keyType);
  const keyType = KEY_TYPE_LETTERS[keyTypeText] ?? (KEY_TYPES as readonly string[]).find((type) => type === keyTypeText);
  if (!keyType) throw new UnsupportedKeyType(`The type '${keyTypeText}' is not supported for keys!`);
  let valueRegexp: string | null = null;
  if (data.valueRegexp !== null && data.valueRegexp !== undefined) {
    if (typeof data.valueRegexp !== 'string' || !compiles(data.valueRegexp)) {
      throw new InvalidObject(`Problem validating value_regexp: ${JSON.stringify(data.valueRegexp)} is not a valid regular expression`);
    }
    valueRegexp = data.valueRegexp;
  }
  if (state.status !== 'Absent') throw new Duplicate(`key '${data.key}' already exists!`);
  return [{ type: 'MetaConventionKeyAdded', data: { key: data.key, keyType: keyType as KeyType, valueType, valueRegexp, addedAt: metadata.now.toISOString() } }];
};

export const addMetaConventionValue = ({ data, metadata }: AddMetaConventionValue, state: MetaConventionState): MetaConventionEvent[] => {
  if (state.status !== 'Defined') throw new KeyNotFound(`key '${data.key}' does not exist!`);
  if (typeof data.value !== 'string' && typeof data.value !== 'number') {
    throw new InvalidValueForKey(`The value ${JSON.stringify(data.value)} for the key ${data.key} is not a string or a number`);
  }
  const value = String(data.value);
  if (state.values.includes(value)) throw new Duplicate(`key-value '${data.key}-${value}' already exists!`);
  if (state.valueRegexp !== null && !matchesFromStart(state.valueRegexp, value)) {
    throw new InvalidValueForKey(`The value ${value} for the key ${data.key} does not match the regular expression ${state.valueRegexp}`);
  }
  if (state.valueType !== null && !hasValueType(data.value, state.valueType)) {
    throw new InvalidValueForKey(`The value ${value} for the key ${data.key} does not match the required type ${state.valueType}`);
  }
  return [{ type: 'MetaConventionValueAdded', data: { key: data.key, value, addedAt: metadata.now.toISOString() } }];
};

export const decideMetaConvention = (command: MetaConventionCommand, state: MetaConventionState): MetaConventionEvent[] => {
  switch (command.type) {
    case 'AddMetaConventionKey':
      return addMetaConventionKey(command, state);
    case 'AddMetaConventionValue':
      return addMetaConventionValue(command, state);
    default: {
      const unknown: never = command;
      throw new Error(`Unknown meta convention command ${(unknown as MetaConventionCommand).type}`);
    }
  }
};

export const metaConventionDecider = {
  name: 'metaConvention',
  initialState: initialMetaConvention,
  evolve: evolveMetaConvention,
  decide: decideMetaConvention,
};

/**
 * Checks a metadata value against its key's convention: the DID type the key applies to, the
 * value type, the pattern (matched from the start, as Python's `re.match`) and, when the key
 * lists allowed values, membership.
 */
export const checkConvention = (convention: MetaConvention, didType: DidType, value: unknown): void => {
  if (!keyTypeAllows(convention.keyType, didType)) {
    throw new InvalidValueForKey(`The key ${convention.key} does not apply to a ${didType} (key type ${convention.keyType})`);
  }
  if (value === null) return;
  const text = String(value);
  if (convention.valueType !== null && !hasValueType(value, convention.valueType)) {
    throw new InvalidValueForKey(`The value ${text} for the key ${convention.key} does not match the required type ${convention.valueType}`);
  }
  if (convention.valueRegexp !== null && !matchesFromStart(convention.valueRegexp, text)) {
    throw new InvalidValueForKey(`The value ${text} for the key ${convention.key} does not match the regular expression ${convention.valueRegexp}`);
  }
  if (convention.values.length > 0 && !convention.values.includes(text)) {
    throw new InvalidValueForKey(`The value ${text} for the key ${convention.key} is not one of the allowed values ${JSON.stringify(convention.values)}`);
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

const hasValueType = (value: unknown, valueType: ValueType): boolean => {
  switch (valueType) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number';
    case 'str':
      return typeof value === 'string';
  }
};

const compiles = (pattern: string): boolean => {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
};

const matchesFromStart = (pattern: string, text: string): boolean => new RegExp(pattern, 'y').test(text);
