import type { OpenDataFile } from '../../../projections/opendata/opendataQueries.ts';
import type { OpenDataDidDocument } from '../../../projections/opendata/opendataDidsProjection.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';

/** Open data entries as Rucio's views render them (`render_json`: states by name, dates in Rucio's format). */

export const openDataListItem = (document: OpenDataDidDocument) => ({
  scope: document.scope,
  name: document.name,
  state: document.state,
  created_at: formatRucioDate(new Date(document.created_at)),
  updated_at: formatRucioDate(new Date(document.updated_at)),
});

/** What `get_opendata_did` answers besides the files: the switches say which parts come. */
export const openDataEntry = (
  document: OpenDataDidDocument,
  include: Readonly<{ doi: boolean; recordId: boolean; meta: boolean }>,
  rule: string | null,
): Record<string, unknown> => ({
  ...openDataListItem(document),
  ...(include.doi ? { doi: document.doi } : {}),
  ...(include.recordId ? { record_id: document.record_id } : {}),
  ...(include.meta ? { meta: document.meta_json === null ? {} : (JSON.parse(document.meta_json) as unknown) } : {}),
  rule,
});

/** Rucio's `files_summary`, gathered while the files stream out. */
export class FilesSummary {
  private length = 0;
  private bytes = 0;
  private readonly extensions = new Set<string>();
  private replicasMissing = 0;
  private readonly started = performance.now();

  add(file: OpenDataFile): void {
    this.length += 1;
    this.bytes += file.bytes ?? 0;
    if (file.uris.length === 0) this.replicasMissing += 1;
    for (const uri of file.uris) {
      const filename = uri.split('/').pop() ?? '';
      const dot = filename.lastIndexOf('.');
      if (dot >= 0) this.extensions.add(filename.slice(dot + 1));
    }
  }

  toJSON() {
    return {
      length: this.length,
      bytes: this.bytes,
      extensions: [...this.extensions],
      replicas_missing: this.replicasMissing,
      // Rucio caches file lists for two hours; here every answer reads the read models.
      request_cache_hit: false,
      request_time_elapsed_millis: performance.now() - this.started,
    };
  }
}
