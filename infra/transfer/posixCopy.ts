import { lstat, rename, unlink, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertStillInside,
  checkedParent,
  createInside,
  localFileOf,
  openInside,
  syncCreated,
  syncDirectory,
  type LocalFile,
} from '../storage/localFiles.ts';
import { checksumFile, checksumToVerify, mismatchOf, StreamChecksum, type ExpectedFile } from './checksums.ts';
import type { TransferEndpoint, TransferJob } from './transferTool.ts';
import { errorCode } from '../typeGuards.ts';

export { pathOfFilePfn } from '../storage/localFiles.ts';

/**
 * One verified copy between two directories of this machine: the work of the `posix` tool for one
 * job. The destination appears whole or not at all: bytes go to a temporary name beside it, are
 * summed as they stream, and are renamed into place only once size and checksum agree and the file
 * is on disk (fsync of the file, then of its directory). Every path stays inside its RSE's root,
 * the endpoint's `root` (infra/storage/localFiles.ts): a link inside an RSE is never followed.
 */

export type CopyResult =
  | Readonly<{ outcome: 'copied'; source: TransferEndpoint; bytes: number }>
  /** The destination already held a verified copy (a job submitted again after a crash): nothing was copied. */
  | Readonly<{ outcome: 'already-there' }>
  | Readonly<{ outcome: 'failed'; reason: string }>;

export type CopyOptions = Readonly<{
  /** Bytes per read and write. */
  chunkBytes: number;
  /** Bytes written between two background flushes to disk. */
  writeBehindBytes: number;
  /** A cap on each copy's rate, or null for none. */
  maxBytesPerSecond: number | null;
  /** A temporary file left untouched this long is taken for the leftover of a dead copy and replaced. */
  staleTemporaryMs: number;
  /** Called once the bytes are written and verified, before they are made durable and renamed: the tool may start another copy meanwhile. */
  onStreamed?: () => void;
  /** Aborting stops the copy between two chunks, removes the temporary file, and rejects with the signal's reason. */
  signal: AbortSignal;
}>;

/** Thrown for a failure of the destination side: another source would not help. */
class DestinationError extends Error {}

/** Copies the job's file to its destination from the first source that gives the expected bytes. */
export const copyVerified = async (job: TransferJob, options: CopyOptions): Promise<CopyResult> => {
  let destination: LocalFile;
  try {
    destination = localFileOf(job.destination.pfn, job.destination.root);
  } catch (error) {
    return { outcome: 'failed', reason: `destination ${job.destination.rse}: ${messageOf(error)}` };
  }
  if (job.sources.length === 0) return { outcome: 'failed', reason: 'no source given' };

  let directory: string;
  try {
    if (await holdsVerifiedCopy(destination, job.file, options)) return { outcome: 'already-there' };
    const parent = await checkedParent(destination, { create: true });
    await syncCreated(parent.created);
    directory = parent.directory;
  } catch (error) {
    if (isAbort(error, options.signal)) throw error;
    return { outcome: 'failed', reason: `destination ${job.destination.pfn}: ${messageOf(error)}` };
  }

  const failures: string[] = [];
  for (const source of job.sources) {
    options.signal.throwIfAborted();
    let sourceFile: LocalFile;
    try {
      sourceFile = localFileOf(source.pfn, source.root);
    } catch (error) {
      failures.push(`source ${source.rse}: ${messageOf(error)}`);
      continue;
    }
    try {
      const failure = await copyFrom(sourceFile, directory, destination.name, job.file, options);
      if (failure === null) return { outcome: 'copied', source, bytes: job.file.bytes };
      failures.push(`source ${source.pfn}: ${failure}`);
    } catch (error) {
      if (isAbort(error, options.signal)) throw error;
      if (error instanceof DestinationError)
        return { outcome: 'failed', reason: `destination ${job.destination.pfn}: ${error.message}` };
      failures.push(`source ${source.pfn}: ${messageOf(error)}`);
    }
  }
  return { outcome: 'failed', reason: failures.join('; ') };
};

/**
 * True when the destination exists with the expected size and checksum. A link in its place is
 * no copy (the rename will replace the link itself).
 */
const holdsVerifiedCopy = async (
  destination: LocalFile,
  expected: ExpectedFile,
  options: CopyOptions,
): Promise<boolean> => {
  const missing = (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  };
  const parent = await checkedParent(destination, { create: false }).catch(missing);
  if (parent === null) return false;
  const existing = await lstat(posix.join(parent.directory, destination.name)).catch(missing);
  if (existing === null || !existing.isFile() || existing.size !== expected.bytes) return false;
  const handle = await openInside(parent.directory, destination.name);
  try {
    const actual = await checksumFile(handle, checksumToVerify(expected), options.chunkBytes, options.signal);
    return mismatchOf(expected, actual) === null;
  } finally {
    await handle.close();
  }
};

/**
 * Copies one source; null when the destination now holds the file, else why this source did not
 * do (a missing source, a size or checksum that differs). Throws DestinationError when writing
 * failed, and the abort reason when cancelled; the temporary file is gone in every case but success.
 */
const copyFrom = async (
  sourceFile: LocalFile,
  directory: string,
  name: string,
  expected: ExpectedFile,
  options: CopyOptions,
): Promise<string | null> => {
  let source: FileHandle;
  try {
    source = await openInside((await checkedParent(sourceFile, { create: false })).directory, sourceFile.name);
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? 'no such file' : messageOf(error);
  }
  try {
    const sourceStat = await source.stat();
    if (!sourceStat.isFile()) return 'not a regular file';
    if (sourceStat.size !== expected.bytes)
      return `size mismatch: expected ${expected.bytes} bytes, got ${sourceStat.size}`;

    const temporaryName = `.${name}.part`;
    const temporary = posix.join(directory, temporaryName);
    const destination = posix.join(directory, name);
    const target = await openTemporary(directory, temporaryName, options.staleTemporaryMs);
    let renamed = false;
    try {
      const checksum = new StreamChecksum(checksumToVerify(expected));
      await streamInto(source, target, checksum, options);
      const mismatch = mismatchOf(expected, checksum.result());
      if (mismatch !== null) return mismatch;
      options.signal.throwIfAborted();
      options.onStreamed?.();
      await destinationStep(() => target.sync());
      await destinationStep(() => target.close());
      await destinationStep(() => assertStillInside(directory));
      await destinationStep(() => rename(temporary, destination));
      renamed = true;
      await destinationStep(() => syncDirectory(directory));
      return null;
    } finally {
      if (!renamed) {
        await target.close().catch(() => undefined);
        await unlink(temporary).catch(() => undefined);
      }
    }
  } finally {
    await source.close().catch(() => undefined);
  }
};

/**
 * Creates the temporary file, refusing to share it: a temporary name that exists belongs to a copy
 * running elsewhere (the destination is busy), unless nobody has written to it for
 * `staleTemporaryMs`, when it is the leftover of a copy that died and is replaced.
 */
const openTemporary = async (directory: string, name: string, staleTemporaryMs: number): Promise<FileHandle> => {
  const temporary = posix.join(directory, name);
  try {
    return await createInside(directory, name);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw new DestinationError(messageOf(error));
  }
  const leftover = await lstat(temporary).catch(() => null);
  if (leftover !== null && Date.now() - leftover.mtimeMs < staleTemporaryMs) {
    throw new DestinationError(`another copy to this destination is in progress (${temporary})`);
  }
  // Unlinking removes a link itself, never its target.
  await unlink(temporary).catch(() => undefined);
  return destinationStep(() => createInside(directory, name));
};

/**
 * Reads the source in chunks and writes each to the target while summing it. Two buffers: the
 * next chunk is read while the previous one is written, and a chunk is summed while it is written.
 * Every `writeBehindBytes` written, an fdatasync starts in the background (one at a time), so the
 * disk writes while the copy goes on and the final fsync only waits for the tail. A copy that
 * flushed only at its end waited for all its bytes at once: 236 MB/s against 321 MB/s with
 * write-behind, averaged over five paired rounds of 1 GB on the development machine.
 */
const streamInto = async (
  source: FileHandle,
  target: FileHandle,
  checksum: StreamChecksum,
  options: CopyOptions,
): Promise<void> => {
  const buffers = [Buffer.allocUnsafe(options.chunkBytes), Buffer.allocUnsafe(options.chunkBytes)] as const;
  const started = Date.now();
  let writing: Promise<void> = Promise.resolve();
  let flushing: Promise<void> | null = null;
  let flushError: unknown = null;
  let unflushed = 0;
  let position = 0;
  let turn = 0;
  try {
    for (;;) {
      options.signal.throwIfAborted();
      if (flushError !== null) throw new DestinationError(messageOf(flushError));
      const buffer = buffers[turn]!;
      const { bytesRead } = await source.read(buffer, 0, options.chunkBytes, position);
      await writing;
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      writing = writeAll(target, chunk, position);
      checksum.update(chunk);
      position += bytesRead;
      unflushed += bytesRead;
      turn = 1 - turn;
      if (unflushed >= options.writeBehindBytes && flushing === null) {
        unflushed = 0;
        flushing = writing
          .then(() => target.datasync())
          .catch((error: unknown) => {
            flushError = error;
          })
          .finally(() => {
            flushing = null;
          });
      }
      if (options.maxBytesPerSecond !== null) {
        const due = started + (position * 1000) / options.maxBytesPerSecond - Date.now();
        if (due > 0) await sleep(due, undefined, { signal: options.signal });
      }
    }
  } finally {
    // Never leave a write or a flush running on a handle the caller is about to close.
    await writing.catch(() => undefined);
    await flushing;
  }
  await writing;
  if (flushError !== null) throw new DestinationError(messageOf(flushError));
};

const writeAll = async (target: FileHandle, chunk: Buffer, position: number): Promise<void> => {
  let written = 0;
  while (written < chunk.length) {
    const result = await destinationStep(() =>
      target.write(chunk, written, chunk.length - written, position + written),
    );
    written += result.bytesWritten;
  }
};

const destinationStep = async <T>(step: () => Promise<T>): Promise<T> => {
  try {
    return await step();
  } catch (error) {
    throw new DestinationError(messageOf(error));
  }
};

const isAbort = (error: unknown, signal: AbortSignal): boolean =>
  signal.aborted && (error === signal.reason || (error instanceof Error && error.name === 'AbortError'));

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
