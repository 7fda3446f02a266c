import { settingValue, SETTINGS, type ConfigSections } from '../../domain/config/settings.ts';
import { pfnFromProtocol, replicaPath } from '../../domain/rse/lfn2pfn.ts';
import type { RseProtocol } from '../../domain/rse/protocol.ts';
import { selectProtocol } from '../../domain/rse/protocolSelection.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { FileDeletion, Storage, StorageSpace } from '../../infra/storage/storage.ts';
import type { RseDocument } from '../../projections/rse/rses.ts';
import type { WorkerContext } from '../workerContext.ts';

/** The storage of one RSE, kept inside its protocol's prefix (infra/storage/localFiles.ts). */
export type RseFiles = Readonly<{
  name: string;
  delete(pfns: readonly string[]): Promise<FileDeletion[]>;
  space(pfn: string): Promise<StorageSpace | undefined>;
}>;

/**
 * How the deletion daemons reach an RSE's files: its preferred `delete` protocol (WAN, as Rucio's
 * reaper), the storage that speaks it, and the PFNs it gives. Staging areas are deleted from the
 * catalogue only (Rucio's reaper does the same).
 */
export type RseStorage = Readonly<{
  protocol: RseProtocol;
  /** Null for a staging area: nothing to delete on storage. */
  storage: RseFiles | null;
  /**
   * The PFN of a replica: its stored path on non-deterministic RSEs, the lfn2pfn path otherwise;
   * none when that would climb out of the prefix (a name or path stored before they were checked).
   */
  pfnOf(scope: string, name: string, storedPath: string | null): string | undefined;
  /** The PFN of a path below the protocol's prefix (a quarantined file). */
  pfnOfPath(path: string): string;
}>;

/** The RSE's storage, or why the daemons cannot delete on it. */
export const rseStorage = (
  context: WorkerContext,
  rse: RseDocument,
  sections: ConfigSections,
): RseStorage | { refusal: string } => {
  let protocol: RseProtocol;
  try {
    protocol = selectProtocol(rse.protocols, { operation: 'delete', domain: 'wan' });
  } catch (error) {
    if (error instanceof RucioError) return { refusal: 'no delete protocol' };
    throw error;
  }
  const stagingArea = rse.properties.staging_area;
  const storage = context.storages.forProtocol(protocol);
  if (!storage && !stagingArea)
    return { refusal: `no storage client here for its ${protocol.scheme} delete protocol (${protocol.impl})` };
  const configured = rse.attributes.lfn2pfn_algorithm;
  const algorithm =
    typeof configured === 'string' && configured ? configured : settingValue(sections, SETTINGS.lfn2pfnDefault);
  return {
    protocol,
    storage: stagingArea ? null : insidePrefix(storage!, protocol.prefix),
    pfnOf: (scope, name, storedPath) => {
      const path = replicaPath(
        { deterministic: rse.properties.deterministic, lfn2pfnAlgorithm: algorithm },
        scope,
        name,
        storedPath,
      );
      return path === undefined ? undefined : pfnFromProtocol(protocol, path);
    },
    pfnOfPath: (path) => pfnFromProtocol(protocol, path),
  };
};

/** The storage, every deletion kept below the protocol's prefix. */
const insidePrefix = (storage: Storage, prefix: string | null): RseFiles => ({
  name: storage.name,
  delete: (pfns) => storage.delete(pfns, prefix),
  space: (pfn) => storage.space(pfn),
});
