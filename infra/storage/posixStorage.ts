import { lstat, statfs, unlink } from 'node:fs/promises';
import { dirname, posix } from 'node:path';
import {
  assertStillInside,
  checkedParent,
  localFileOf,
  OutsideRootError,
  pathOfFilePfn,
  syncDirectory,
  type LocalFile,
} from './localFiles.ts';
import type { FileDeletion, Storage, StorageSpace } from './storage.ts';
import { errorCode } from '../typeGuards.ts';

/** Errors of the storage rather than of one file (Rucio's ServiceUnavailable, RSEAccessDenied). */
const NO_ACCESS = new Set(['EACCES', 'EPERM', 'EROFS', 'EIO', 'ENOTCONN', 'ESTALE', 'EHOSTDOWN', 'ENODEV', 'ENXIO']);

/** Unlinks at once: the thread pool does the system calls, this bounds what waits on it. */
const PARALLEL = 16;

/**
 * Deletion on a `file` protocol (Rucio's `rucio.rse.protocols.posix.Default`): the PFN's path on
 * this machine is unlinked (a missing file is `not-found`), then each directory that lost a file
 * is fsynced, so the deletion survives a power cut before the catalogue forgets the replica.
 * Directories are left in place, as Rucio's posix protocol leaves them. Nothing outside the
 * protocol's prefix is touched: a PFN outside it, a link among its directories, or a prefix that
 * is not an absolute normalised path fail the file (localFiles.ts); a link in the file's place is
 * removed itself, never its target.
 */
export class PosixStorage implements Storage {
  readonly name = 'posix';

  async delete(pfns: readonly string[], root: string | null): Promise<FileDeletion[]> {
    const results: FileDeletion[] = new Array(pfns.length);
    const directories = new Map<string, number[]>();
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < pfns.length; index = next++) {
        const pfn = pfns[index]!;
        let file: LocalFile;
        try {
          file = localFileOf(pfn, root);
        } catch (error) {
          results[index] = { pfn, outcome: 'failed', reason: messageOf(error), noAccess: false };
          continue;
        }
        try {
          const directory = await unlinkInside(file);
          results[index] = { pfn, outcome: 'deleted' };
          directories.set(directory, [...(directories.get(directory) ?? []), index]);
        } catch (error) {
          const code = errorCode(error) ?? '';
          // A directory missing on the way (ENOENT) or a file where one was expected (ENOTDIR): the file is not there.
          if (code === 'ENOENT' || code === 'ENOTDIR') results[index] = { pfn, outcome: 'not-found' };
          else
            results[index] = {
              pfn,
              outcome: 'failed',
              reason: error instanceof OutsideRootError ? messageOf(error) : `${file.path}: ${messageOf(error)}`,
              noAccess: NO_ACCESS.has(code),
            };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, pfns.length) }, worker));
    // A directory that cannot be flushed may bring its files back after a crash: those are not reported gone.
    await Promise.all(
      [...directories].map(async ([directory, indexes]) => {
        try {
          await syncDirectory(directory);
        } catch (error) {
          for (const index of indexes)
            results[index] = {
              pfn: pfns[index]!,
              outcome: 'failed',
              reason: `${directory}: ${messageOf(error)}`,
              noAccess: true,
            };
        }
      }),
    );
    return results;
  }

  async space(pfn: string): Promise<StorageSpace | undefined> {
    let path: string;
    try {
      path = pathOfFilePfn(pfn);
    } catch {
      return undefined;
    }
    // The prefix may not exist yet: the nearest existing ancestor is on the same file system.
    for (let directory = path; ; directory = dirname(directory)) {
      try {
        const stats = await statfs(directory);
        const total = Number(stats.blocks) * Number(stats.bsize);
        return { total, used: total - Number(stats.bavail) * Number(stats.bsize) };
      } catch {
        if (directory === dirname(directory)) return undefined;
      }
    }
  }
}

/** Unlinks the file through its checked directory; answers that directory, to be flushed. */
const unlinkInside = async (file: LocalFile): Promise<string> => {
  const { directory } = await checkedParent(file, { create: false });
  const path = posix.join(directory, file.name);
  const stats = await lstat(path);
  if (stats.isDirectory()) throw new Error(`${file.path} is a directory`);
  await assertStillInside(directory);
  await unlink(path);
  return directory;
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
