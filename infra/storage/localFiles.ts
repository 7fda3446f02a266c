import { errorCode } from '../narrowing.ts';
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, posix } from 'node:path';

/**
 * The files of an RSE on this machine (a `file` protocol, Rucio's posix implementation) live below
 * the protocol's prefix, its root. Every path the posix transfer tool and the deletion daemons
 * touch goes through here, so none of them leaves the root:
 *
 * - by name: the PFN must be `file://<host><root>/<path>`, without `.` or `..` names, and the root
 *   an absolute normalised path (a stored prefix that is not is refused at use, with the reason);
 *   the path, resolved lexically, must lie strictly below the root (`isStrictlyBelow`);
 * - on disk: every directory between the root and the file is checked with `lstat` and must be a
 *   real directory, never a symbolic link (a link inside an RSE could point anywhere), and the
 *   directory reached must lie below the root's real path; directories
 *   are created one at a time, so `mkdir` never walks through a link either; the file itself is
 *   opened with O_NOFOLLOW, and temporary files are created with O_EXCL (which does not follow a
 *   link); a rename replaces the destination's entry, whatever it was, and never writes through it.
 *
 * Node has no `openat`: between the check of the directories and the system call that uses them,
 * a process that may write inside the RSE could swap a checked directory for a link. So the real
 * path of the parent directory is read again right before every write, rename and unlink, and
 * the file opened is compared with the one found there (device and inode): the window left is
 * between that check and the next system call. The root itself is the administrator's choice:
 * links in the prefix (`/data` → `/mnt/disk1`) are followed.
 */

/** A path that would leave the RSE's root, or a root that cannot be trusted: nothing was touched. */
export class OutsideRootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutsideRootError';
  }
}

/**
 * The local path of a `file` PFN. Accepts what `pfnFromProtocol` builds for the posix protocol,
 * `file://<hostname><prefix><path>` (any host name: the tool reads the path on this machine, as
 * Rucio's posix protocol does), and `file:///path`. The path is taken as written, not
 * percent-decoded, since PFNs are built by concatenation (and the file system decodes nothing
 * either). Throws for other schemes, for paths that are not absolute, and for paths with a `.` or
 * `..` name: such a path means something else once resolved than as written, and no PFN dms
 * builds has one. Repeated slashes (a name starting with `/` below a hashed directory) are one.
 */
export const pathOfFilePfn = (pfn: string): string => {
  const match = /^file:\/\/([^/]*)(\/.*)$/.exec(pfn);
  if (!match) throw new Error(`not a file:// PFN: ${pfn}`);
  const path = match[2]!;
  const names = path.split('/');
  if (names.includes('..')) throw new Error(`the PFN climbs out of its prefix with '..': ${pfn}`);
  if (names.includes('.')) throw new Error(`the PFN holds a '.' name: ${pfn}`);
  const resolved = posix.resolve(path);
  // With neither name, lexical resolution only merges slashes; anything else would be a bug to stop at.
  if (resolved !== posix.normalize(path).replace(/(.)\/$/, '$1'))
    throw new Error(`the PFN's path resolves to ${resolved}, not to what it names: ${pfn}`);
  return posix.normalize(path);
};

/**
 * True when `path` lies strictly below `root`, both absolute, resolved lexically (`..` and `.`
 * taken into account, nothing read on disk).
 */
export const isStrictlyBelow = (path: string, root: string): boolean => {
  const relative = posix.relative(posix.resolve(root), posix.resolve(path));
  return relative !== '' && relative !== '..' && !relative.startsWith('../') && !posix.isAbsolute(relative);
};

/**
 * An absolute normalised directory path: `/`, then names separated by single slashes, none of
 * them `.` or `..`; one trailing slash is allowed. What a `file` protocol's prefix must be.
 */
export const isNormalisedRoot = (root: string): boolean => {
  if (!root.startsWith('/')) return false;
  const names = root.slice(1).replace(/\/$/, '');
  return names === '' || names.split('/').every((name) => name !== '' && name !== '.' && name !== '..');
};

/** A file below a root, by name only: `directories` lead from the root to the file `name`. */
export type LocalFile = Readonly<{
  /** The root, without a trailing slash (`/` alone stays `/`). */
  root: string;
  path: string;
  directories: readonly string[];
  name: string;
}>;

/** Reads a PFN as a file below `root` (the protocol's prefix); throws OutsideRootError when it is not one. */
export const localFileOf = (pfn: string, root: string | null | undefined): LocalFile => {
  if (root === null || root === undefined || root === '')
    throw new OutsideRootError(
      `no file protocol prefix to keep ${pfn} inside: the RSE's files are reached only below one`,
    );
  if (!isNormalisedRoot(root))
    throw new OutsideRootError(
      `the file protocol's prefix '${root}' is not an absolute normalised path: set it to one (PUT /rses/{rse}/protocols/file)`,
    );
  let path: string;
  try {
    path = pathOfFilePfn(pfn);
  } catch (error) {
    throw new OutsideRootError(error instanceof Error ? error.message : String(error));
  }
  const base = root.replace(/\/$/, '');
  if (!path.startsWith(`${base}/`) || !isStrictlyBelow(path, root))
    throw new OutsideRootError(`${pfn} is not below the prefix ${root}`);
  const names = path.slice(base.length + 1).split('/');
  const name = names.pop()!;
  if (name === '' || names.some((directory) => directory === '' || directory === '.'))
    throw new OutsideRootError(`${pfn} names no file below the prefix ${root}`);
  return { root: base === '' ? '/' : base, path, directories: names, name };
};

/** Where a checked directory now is: its real path, and the directories created on the way. */
export type CheckedParent = Readonly<{ directory: string; created: readonly string[] }>;

/**
 * Walks from the root to the file's directory without following links: each directory must exist
 * (or is created, with `create`) and be a real directory. Throws OutsideRootError at a link, and
 * the system's error (ENOENT, ENOTDIR) otherwise.
 */
export const checkedParent = async (
  file: LocalFile,
  options: Readonly<{ create: boolean }>,
): Promise<CheckedParent> => {
  const created: string[] = [];
  if (options.create) {
    // The root may not exist yet on a fresh RSE: it is the administrator's path, created as given.
    const first = await mkdir(file.root, { recursive: true });
    if (first !== undefined)
      for (let directory = file.root; directory !== dirname(first); directory = dirname(directory))
        created.push(directory);
  }
  const realRoot = await realpath(file.root);
  let directory = realRoot;
  for (const [index, name] of file.directories.entries()) {
    const next = posix.join(directory, name);
    let stats = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && options.create) return null;
      throw error;
    });
    if (stats === null) {
      try {
        await mkdir(next);
        created.push(next);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      stats = await lstat(next);
    }
    if (stats.isSymbolicLink())
      throw new OutsideRootError(
        `${posix.join(file.root, ...file.directories.slice(0, index + 1))} is a symbolic link: the RSE's files are reached without following links`,
      );
    if (!stats.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${next}`), { code: 'ENOTDIR' });
    directory = next;
  }
  // Built from the root's real path one checked name at a time, so below it: said once more here,
  // so that no change to the walk above can hand out a directory elsewhere.
  if (directory !== realRoot && !isStrictlyBelow(directory, realRoot))
    throw new OutsideRootError(`${directory} is not below the prefix ${file.root} (${realRoot})`);
  return { directory, created };
};

/** Checks again, right before it is used, that a checked directory still is where it was (no link swapped in). */
export const assertStillInside = async (directory: string): Promise<void> => {
  const real = await realpath(directory);
  if (real !== directory)
    throw new OutsideRootError(`${directory} now leads to ${real}: a directory was replaced by a link meanwhile`);
};

/** Opens a file below its checked directory for reading, refusing a link and a swap. */
export const openInside = async (parent: string, name: string): Promise<FileHandle> => {
  const handle = await open(posix.join(parent, name), constants.O_RDONLY | constants.O_NOFOLLOW).catch(
    (error: NodeJS.ErrnoException) => {
      // O_NOFOLLOW on a link: ELOOP.
      if (error.code === 'ELOOP')
        throw new OutsideRootError(
          `${posix.join(parent, name)} is a symbolic link: the RSE's files are read without following links`,
        );
      throw error;
    },
  );
  try {
    await assertSameFile(handle, parent, name);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
};

/** Creates a new file below its checked directory (O_EXCL: never an existing file nor a link), checked as `openInside`. */
export const createInside = async (parent: string, name: string, mode = 0o644): Promise<FileHandle> => {
  const handle = await open(
    posix.join(parent, name),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    await assertSameFile(handle, parent, name);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
};

/** The handle is the file found under its name in the directory, and the directory is still where it was. */
const assertSameFile = async (handle: FileHandle, parent: string, name: string): Promise<void> => {
  await assertStillInside(parent);
  const [opened, named] = await Promise.all([handle.stat(), lstat(posix.join(parent, name))]);
  if (opened.dev !== named.dev || opened.ino !== named.ino)
    throw new OutsideRootError(`${posix.join(parent, name)} changed while it was opened`);
};

/** fsyncs the parent of every directory created, so the new path survives a crash. */
export const syncCreated = async (created: readonly string[]): Promise<void> => {
  const parents = new Set(created.map((directory) => dirname(directory)));
  for (const parent of parents) await syncDirectory(parent);
};

export const syncDirectory = async (directory: string): Promise<void> => {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};
