import { InvalidObject } from './errors.ts';

/**
 * Rucio's name rules (lib/rucio/common/schema/generic.py, single-VO). A violation is an
 * InvalidObject with Rucio's "Problem validating <schema>: ..." message.
 */
export const NAME_RULES = {
  account: { pattern: /^[a-z0-9-_]+$/, maxLength: 25 },
  scope: { pattern: /^[a-zA-Z_\-.0-9]+$/, maxLength: 25 },
  name: { pattern: /^[/A-Za-z0-9][/A-Za-z0-9.\-_]*$/, maxLength: 250 },
  rse: { pattern: /^([A-Z0-9]+([_-][A-Z0-9]+)*)$/, maxLength: 255 },
  account_attribute: { pattern: /^[a-zA-Z0-9\-_\\/.]{1,30}$/, maxLength: 30 },
} as const;

/**
 * C0 and C1 control characters and DEL (Unicode's Cc: U+0000–U+001F, U+007F–U+009F): never part of a name, key or path. Refused wherever a
 * name comes in, never stripped or cut at.
 */
export const CONTROL_CHARACTERS = /\p{Cc}/u;

/**
 * Keys that name a property every JavaScript object has: as the key of a map kept in an object
 * (config sections, metadata, filters, attributes) they would reach the prototype instead of an
 * entry, so they are refused wherever a client names a key.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * What is wrong with a key a client names (a metadata key, a config section or option, a filter,
 * an attribute): empty, longer than `maxLength`, control characters, a prototype key, a leading
 * `$`; undefined when nothing is.
 */
export const keyProblem = (key: string, maxLength: number): string | undefined => {
  if (key === '') return 'is empty';
  if (key.length > maxLength) return `is longer than ${maxLength} characters`;
  if (CONTROL_CHARACTERS.test(key)) return 'holds control characters';
  if (PROTOTYPE_KEYS.has(key)) return 'is reserved';
  // MongoDB reads a leading `$` as an operator, in filters and in stored documents alike.
  if (key.startsWith('$')) return "starts with '$'";
  return undefined;
};

export type NameKind = keyof typeof NAME_RULES;

export const isValidName = (kind: NameKind, value: string): boolean => {
  const rule = NAME_RULES[kind];
  return value.length <= rule.maxLength && rule.pattern.test(value);
};

export const assertValidName = (kind: NameKind, value: string): void => {
  if (isValidName(kind, value)) return;
  const rule = NAME_RULES[kind];
  const why =
    value.length > rule.maxLength
      ? `'${value}' is too long (at most ${rule.maxLength} characters)`
      : `'${value}' does not match '${rule.pattern.source}'`;
  throw new InvalidObject(`Problem validating ${kind}: ${why}`);
};
