import type { ListedFile } from '../../../domain/replica/replicaListing.ts';
import { formatRucioDate, rucioDateOrNull } from '../../../domain/shared/dates.ts';
import type { DatasetReplica } from '../../../projections/replica/datasetReplicaQueries.ts';

/** The answers' shapes for replicas: Rucio's rows with its date format, and metalink documents. */

/** Rucio's metalink content type, sent exactly so. */
export const METALINK_TYPE = 'application/metalink4+xml';

/** The protocols Rucio lists when a metalink is asked for without schemes (SUPPORTED_PROTOCOLS). */
export const SUPPORTED_PROTOCOLS = [
  'gsiftp',
  'srm',
  'root',
  'davs',
  'http',
  'https',
  'file',
  'storm',
  'srm+https',
  'scp',
  'rsync',
  'rclone',
  'magnet',
] as const;

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Python's `xml.sax.saxutils.escape`: only `&`, `<` and `>`. */
const escapeXml = (text: string): string => text.replace(/[&<>]/g, (char) => XML_ESCAPES[char]!);

const METALINK_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n';

/** One `<file>` of a metalink (web/rest/flaskapi/v1/replicas.py `_generate_one_metalink_file`). */
const metalinkFile = (file: ListedFile, policySchema: string, detailedUrl: boolean): string => {
  let xml = ` <file name="${file.name}">\n`;
  if (file.parents && file.parents.length > 0)
    xml += `  <parents>\n${file.parents.map((parent) => `   <did>${parent}</did>\n`).join('')}  </parents>\n`;
  xml += `  <identity>${file.scope}:${file.name}</identity>\n`;
  if (file.adler32 !== null) xml += `  <hash type="adler32">${file.adler32}</hash>\n`;
  if (file.md5 !== null) xml += `  <hash type="md5">${file.md5}</hash>\n`;
  xml += `  <size>${file.bytes === null ? 'None' : file.bytes}</size>\n`;
  xml += `  <glfn name="/${policySchema}/rucio/${file.scope}:${file.name}"></glfn>\n`;
  for (const [pfn, entry] of Object.entries(file.pfns)) {
    xml += detailedUrl
      ? `  <url location="${entry.rse}" domain="${entry.domain}" priority="${entry.priority}" client_extract="${entry.client_extract}">${escapeXml(pfn)}</url>\n`
      : `  <url location="${entry.rse}" priority="${entry.priority}">${escapeXml(pfn)}</url>\n`;
  }
  return `${xml} </file>\n`;
};

/** A metalink document streamed file by file; no file gives the empty document. */
export async function* metalinkDocument(
  files: AsyncIterable<ListedFile>,
  policySchema: string,
  detailedUrl: boolean,
): AsyncGenerator<string> {
  yield METALINK_HEAD;
  for await (const file of files) yield metalinkFile(file, policySchema, detailedUrl);
  yield '</metalink>\n';
}

/**
 * A dataset replica row as `list_dataset_replicas` and `list_datasets_per_rse` answer it; state
 * AVAILABLE when every file of the dataset has an available replica on the RSE.
 */
export const datasetReplicaJson = (row: DatasetReplica) => ({
  scope: row.scope,
  name: row.name,
  rse: row.rse,
  rse_id: row.rse_id,
  bytes: row.bytes,
  length: row.length,
  available_bytes: row.available_bytes,
  available_length: row.available_length,
  state: row.available_length >= row.length ? 'AVAILABLE' : 'UNAVAILABLE',
  created_at: formatRucioDate(new Date(row.createdAt)),
  updated_at: formatRucioDate(new Date(row.updatedAt)),
  accessed_at: rucioDateOrNull(row.accessedAt),
});
