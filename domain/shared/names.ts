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
 * C0 and C1 control characters and DEL: never part of a name, key or path. Refused wherever a
 * name comes in, never stripped or cut at.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

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
