import { open, statfs, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathOfFilePfn } from '../transfer/posixCopy.ts';
import type { FileDeletion, Storage, StorageSpace } from './storage.ts';
import { errorCode } from '../narrowing.ts';

/** Errors of the storage rather than of one file (Rucio's ServiceUnavailable, RSEAccessDenied). */
const NO_ACCESS = new Set(['EACCES', 'EPERM', 'EROFS', 'EIO', 'ENOTCONN', 'ESTALE', 'EHOSTDOWN', 'ENODEV', 'ENXIO']);

/** Unlinks at once: the thread pool does the system calls, this bounds what waits on it. */
const PARALLEL = 16;

/**
 * Deletion on a `file` protocol (Rucio's `rucio.rse.protocols.posix.Default`): the PFN's path on
 * this machine is unlinked (a missing file is `not-found`), then each directory that lost a file
 * is fsynced, so the deletion survives a power cut before the catalogue forgets the replica.
 * Directories are left in place, as Rucio's posix protocol leaves them.
 */
export class PosixStorage implements Storage {
  readonly name = 'posix';

  async delete(pfns: readonly string[]): Promise<FileDeletion[]> {
    const results: FileDeletion[] = new Array(pfns.length);
    const directories = new Map<string, number[]>();
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < pfns.length; index = next++) {
        const pfn = pfns[index]!;
        let path: string;
        try {
          path = pathOfFilePfn(pfn);
        } catch (error) {
          results[index] = { pfn, outcome: 'failed', reason: messageOf(error), noAccess: false };
          continue;
        }
        try {
          await unlink(path);
          results[index] = { pfn, outcome: 'deleted' };
          directories.set(dirname(path), [...(directories.get(dirname(path)) ?? []), index]);
        } catch (error) {
          const code = errorCode(error) ?? '';
          if (code === 'ENOENT') results[index] = { pfn, outcome: 'not-found' };
          else
            results[index] = {
              pfn,
              outcome: 'failed',
              reason: `${path}: ${messageOf(error)}`,
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

const syncDirectory = async (directory: string): Promise<void> => {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
