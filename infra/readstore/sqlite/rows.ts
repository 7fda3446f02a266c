import { isRecord } from '../../typeGuards.ts';
import type { ColumnValue } from './columns.ts';

/**
 * The columns of rows SQLite answers, read by name. The store caches its statements by their SQL
 * text, so their rows come back untyped: these readers check that a column holds what the
 * statement selected (far cheaper than the JSON parse that follows) instead of casting the row.
 */

const columnOf = (row: unknown, column: string): unknown => (isRecord(row) ? row[column] : undefined);

const missing = (column: string, kind: string): Error => new Error(`SQLite answered no ${kind} column ${column}`);

export const textColumn = (row: unknown, column: string): string => {
  const value = columnOf(row, column);
  if (typeof value !== 'string') throw missing(column, 'text');
  return value;
};

export const numberColumn = (row: unknown, column: string): number => {
  const value = columnOf(row, column);
  if (typeof value !== 'number') throw missing(column, 'number');
  return value;
};

/** A column of a row read as an array (a raw statement), by its place in the SELECT list. */
const rawColumn = (row: unknown, index: number): unknown => (Array.isArray(row) ? row[index] : undefined);

export const rawText = (row: unknown, index: number): string => {
  const value = rawColumn(row, index);
  if (typeof value !== 'string') throw missing(String(index), 'text');
  return value;
};

export const rawIndexed = (row: unknown, index: number): ColumnValue => {
  const value = rawColumn(row, index) ?? null;
  if (value === null || typeof value === 'string' || typeof value === 'number' || Buffer.isBuffer(value)) return value;
  throw missing(String(index), 'indexed');
};
