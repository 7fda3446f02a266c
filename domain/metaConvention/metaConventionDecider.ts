import { unknownCommand, type Decider } from '../shared/decider.ts';
import {
  Duplicate,
  InvalidObject,
  InvalidValueForKey,
  KeyNotFound,
  UnsupportedKeyType,
  UnsupportedValueType,
} from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { pythonPatternProblem } from '../shared/pythonRegex.ts';
import {
  evolveMetaConvention,
  hasValueType,
  initialMetaConvention,
  KEY_TYPES,
  matchesFromStart,
  type KeyType,
  type MetaConventionEvent,
  type MetaConventionState,
  type ValueType,
} from './metaConvention.ts';

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

export const addMetaConventionKey = (
  { data, metadata }: AddMetaConventionKey,
  state: MetaConventionState,
): MetaConventionEvent[] => {
  let valueType: ValueType | null = null;
  if (data.valueType !== null && data.valueType !== undefined && data.valueType !== '') {
    valueType = VALUE_TYPE_NAMES[String(data.valueType)] ?? null;
    if (!valueType) throw new UnsupportedValueType(`The type '${String(data.valueType)}' is not supported for values!`);
  }
  // Python formats a missing key type as 'None'.
  const keyTypeText = data.keyType === null || data.keyType === undefined ? 'None' : String(data.keyType);
  const keyType = KEY_TYPE_LETTERS[keyTypeText] ?? KEY_TYPES.find((type) => type === keyTypeText);
  if (!keyType) throw new UnsupportedKeyType(`The type '${keyTypeText}' is not supported for keys!`);
  let valueRegexp: string | null = null;
  if (data.valueRegexp !== null && data.valueRegexp !== undefined) {
    if (typeof data.valueRegexp !== 'string')
      throw new InvalidObject(
        `Problem validating value_regexp: ${JSON.stringify(data.valueRegexp)} is not a valid regular expression`,
      );
    const problem = pythonPatternProblem(data.valueRegexp);
    if (problem !== undefined)
      throw new InvalidObject(
        `Problem validating value_regexp: ${JSON.stringify(data.valueRegexp.slice(0, 200))} is not a valid regular expression here (${problem})`,
      );
    valueRegexp = data.valueRegexp;
  }
  if (state.status !== 'Absent') throw new Duplicate(`key '${data.key}' already exists!`);
  return [
    {
      type: 'MetaConventionKeyAdded',
      data: { key: data.key, keyType, valueType, valueRegexp, addedAt: metadata.now.toISOString() },
    },
  ];
};

export const addMetaConventionValue = (
  { data, metadata }: AddMetaConventionValue,
  state: MetaConventionState,
): MetaConventionEvent[] => {
  if (state.status !== 'Defined') throw new KeyNotFound(`key '${data.key}' does not exist!`);
  if (typeof data.value !== 'string' && typeof data.value !== 'number') {
    throw new InvalidValueForKey(
      `The value ${JSON.stringify(data.value)} for the key ${data.key} is not a string or a number`,
    );
  }
  const value = String(data.value);
  if (state.values.includes(value)) throw new Duplicate(`key-value '${data.key}-${value}' already exists!`);
  if (state.valueRegexp !== null && !matchesFromStart(state.valueRegexp, value)) {
    throw new InvalidValueForKey(
      `The value ${value} for the key ${data.key} does not match the regular expression ${state.valueRegexp}`,
    );
  }
  if (state.valueType !== null && !hasValueType(data.value, state.valueType)) {
    throw new InvalidValueForKey(
      `The value ${value} for the key ${data.key} does not match the required type ${state.valueType}`,
    );
  }
  return [{ type: 'MetaConventionValueAdded', data: { key: data.key, value, addedAt: metadata.now.toISOString() } }];
};

export const decideMetaConvention = (
  command: MetaConventionCommand,
  state: MetaConventionState,
): MetaConventionEvent[] => {
  switch (command.type) {
    case 'AddMetaConventionKey':
      return addMetaConventionKey(command, state);
    case 'AddMetaConventionValue':
      return addMetaConventionValue(command, state);
    default:
      return unknownCommand('meta convention', command);
  }
};

export const metaConventionDecider: Decider<MetaConventionState, MetaConventionCommand, MetaConventionEvent> = {
  name: 'metaConvention',
  initialState: initialMetaConvention,
  evolve: evolveMetaConvention,
  decide: decideMetaConvention,
};
