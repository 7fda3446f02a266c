import { getPath } from '../documents.ts';

/**
 * Indexed fields are copied from the JSON document into columns declared without a type, so
 * SQLite stores each value in its own storage class and compares without conversions:
 * strings as TEXT, numbers as INTEGER/REAL, booleans as one-byte BLOBs (so `true` never equals
 * 1), null and missing as NULL. Within a storage class SQLite orders like MongoDB does
 * (numbers numerically, strings by UTF-8 bytes), which lets SQL filter and sort on them exactly.
 */

export type ColumnValue = string | number | Buffer | null;

const TRUE_BLOB = Buffer.from([1]);
const FALSE_BLOB = Buffer.from([0]);

export const columnName = (path: string): string => `f:${path}`;

export const quoteIdentifier = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

export class IndexedFieldTypeError extends Error {
  constructor(collection: string, path: string) {
    super(`Indexed field "${path}" of collection ${collection} must hold a string, number, boolean or null`);
    this.name = 'IndexedFieldTypeError';
  }
}

/** Encodes a query or document value for a column; undefined when it has no column encoding. */
export const encodeScalar = (value: unknown): ColumnValue | undefined => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value ? TRUE_BLOB : FALSE_BLOB;
  return undefined;
};

/** A column's value as the document held it: a boolean's one-byte BLOB back to the boolean. */
export const decodeColumn = (value: ColumnValue): string | number | boolean | null =>
  Buffer.isBuffer(value) ? value[0] === 1 : value;

export const columnValueOf = (collection: string, document: unknown, path: string): ColumnValue => {
  const encoded = encodeScalar(getPath(document, path));
  if (encoded === undefined) throw new IndexedFieldTypeError(collection, path);
  return encoded;
};
