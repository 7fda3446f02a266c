/**
 * Type guards the adapters share for values the compiler cannot know the type of (parsed JSON, a
 * driver's answer, a caught error): narrow with these instead of casting. The domain keeps its
 * own (domain/shared/narrowing.ts), since the layers do not import each other.
 */

/** A JSON-like object: not null, not an array; its fields are read by name. */
export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Any object, arrays included: its fields (an array's indices too) are read by name. */
export const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null;

/** The message of a caught error, whatever was thrown. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The `code` of a caught error (a Node.js system error's `ENOENT`, SQLite's `SQLITE_CONSTRAINT_…`). */
export const errorCode = (error: unknown): string | undefined =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
