/**
 * The storage port: what the deletion daemons (the reaper, the dark reaper) ask of an RSE's
 * storage, through the RSE's `delete` protocol (Rucio's `rsemanager.create_protocol(rse, 'delete')`
 * and its `delete(pfn)`). Transfers have their own port (infra/transfer/).
 */

/**
 * What became of one file: gone (`deleted`, or `not-found`, which the reaper counts as deleted,
 * as Rucio does), or still there (`failed`). `noAccess` marks failures of the storage itself
 * (permission, read-only, I/O, unreachable), which Rucio's reaper counts to exclude the RSE for a
 * while; other failures concern the one file.
 */
export type FileDeletion =
  | Readonly<{ pfn: string; outcome: 'deleted' | 'not-found' }>
  | Readonly<{ pfn: string; outcome: 'failed'; reason: string; noAccess: boolean }>;

/** Space on a storage, in bytes, as the reaper's need reads it (Rucio's `storage` usage source). */
export type StorageSpace = Readonly<{ total: number; used: number }>;

export interface Storage {
  /** `posix`, `mock`: shown in reports. */
  readonly name: string;
  /**
   * Deletes the files, answering for each PFN in order. A file reported gone stays gone after a
   * crash of this machine (the directory is flushed before the answer). `root` is the protocol's
   * prefix: a storage on this machine touches nothing outside it (infra/storage/localFiles.ts).
   */
  delete(pfns: readonly string[], root: string | null): Promise<FileDeletion[]>;
  /** Total and used bytes of the file system holding `pfn`, when this storage can tell. */
  space(pfn: string): Promise<StorageSpace | undefined>;
}
