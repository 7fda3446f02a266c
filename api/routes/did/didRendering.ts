import type { ContentTotals } from '../../../domain/did/did.ts';
import { DID_COLUMNS } from '../../../domain/did/didMetadata.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import type { ContentDocument, ContentHistoryDocument } from '../../../projections/did/didContentsProjection.ts';
import type { DidDocument } from '../../../projections/did/didsProjection.ts';

/** The JSON shapes of Rucio's DID answers, built from the read models (dates in Rucio's format). */

const DATE_COLUMNS = new Set([
  'expired_at',
  'deleted_at',
  'accessed_at',
  'closed_at',
  'eol_at',
  'created_at',
  'updated_at',
]);

const column = (document: DidDocument, name: string): unknown => {
  const value = document[name];
  if (value === undefined || value === null) return null;
  // Dates are stored as ISO strings (see projections/did/didsProjection.ts).
  return DATE_COLUMNS.has(name) && typeof value === 'string' ? rucioDateOrNull(value) : value;
};

/** `get_did`: the file or collection record, with live sizes when `dynamic_depth` asked for them. */
export const didStatusJson = (document: DidDocument, dynamic?: ContentTotals) => {
  const bytes = dynamic ? dynamic.bytes : column(document, 'bytes');
  if (document.did_type === 'FILE') {
    return {
      scope: document.scope,
      name: document.name,
      type: 'FILE',
      account: document.account,
      bytes,
      length: 1,
      md5: column(document, 'md5'),
      adler32: column(document, 'adler32'),
    };
  }
  return {
    scope: document.scope,
    name: document.name,
    type: document.did_type,
    account: document.account,
    open: column(document, 'is_open'),
    monotonic: document.monotonic,
    expired_at: column(document, 'expired_at'),
    length: dynamic ? dynamic.length : column(document, 'length'),
    bytes,
  };
};

/** The DID_COLUMN plugin's metadata: every column of Rucio's `dids` row. */
export const didColumnMetadata = (document: DidDocument): Record<string, unknown> =>
  Object.fromEntries(DID_COLUMNS.map((name) => [name, column(document, name)]));

/** The JSON plugin's metadata: the keys set through it. */
export const jsonMetadata = (document: DidDocument): Record<string, unknown> => ({ ...(document.meta ?? {}) });

export const contentEntryJson = (edge: ContentDocument) => ({
  scope: edge.scope,
  name: edge.name,
  type: edge.did_type,
  bytes: edge.bytes,
  adler32: edge.adler32,
  md5: edge.md5,
});

export const contentHistoryJson = (edge: ContentHistoryDocument) => ({
  ...contentEntryJson(edge),
  deleted_at: rucioDateOrNull(edge.deleted_at),
  created_at: rucioDateOrNull(edge.created_at),
  updated_at: rucioDateOrNull(edge.updated_at),
});

export const parentJson = (edge: ContentDocument) => ({
  scope: edge.parentScope,
  name: edge.parentName,
  type: edge.parentType,
});
