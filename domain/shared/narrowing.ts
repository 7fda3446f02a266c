/**
 * Type guards for values the compiler cannot know the type of (parsed JSON, a request's fields, a
 * caught error): code narrows with these instead of casting, so a wrong guess is a branch the
 * code handles rather than a type that lies. infra/ has its own copy of the two it needs
 * (infra/typeGuards.ts), since the layers do not import each other.
 */

/** A JSON-like object: not null, not an array; its fields are read by name. */
export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `value` is one of `members`, the values of a union of literals listed once. */
export const isOneOf = <T>(members: readonly T[], value: unknown): value is T =>
  (members as readonly unknown[]).includes(value);

/** Whether `key` names an own field of `record` (a lookup table keyed by a union of literals). */
export const isKeyOf = <T extends object>(record: T, key: PropertyKey): key is keyof T => Object.hasOwn(record, key);

/** The keys of a record keyed by a union of literals, typed as that union. */
export const keysOf = <T extends object>(record: T): (keyof T & string)[] =>
  Object.keys(record).filter((key) => isKeyOf(record, key));

/** A value as a number, or null when it is none (missing included): an optional column read back. */
export const numberOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/** A value as text, or null when it is none (missing included): an optional column read back. */
export const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The message of a caught error, whatever was thrown. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
