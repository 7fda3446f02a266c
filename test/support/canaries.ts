import { expect } from 'chai';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Canary files for attacks on storage: a file planted where an escaping path would land (outside
 * every RSE's prefix), remembered by content, inode and modification time, and the listing of its
 * directory. `assertUntouched` fails if the file was changed, replaced or removed, or if anything
 * appeared beside it (a copy's temporary file, a new file).
 */
export type Canary = Readonly<{ path: string; assertUntouched(): void }>;

/** Every canary planted in this process: canaries may share a directory without counting as intruders. */
const plantedPaths = new Set<string>();

/** What lies beside `path` other than canaries. */
const neighboursOf = (path: string): string[] =>
  readdirSync(dirname(path))
    .filter((name) => !plantedPaths.has(join(dirname(path), name)))
    .sort();

export const plantCanary = (path: string, content = `canary at ${path}\n`): Canary => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  plantedPaths.add(path);
  const planted = lstatSync(path);
  const neighbours = neighboursOf(path);
  return {
    path,
    assertUntouched() {
      const now = lstatSync(path);
      expect(now.isFile(), `${path} is still a regular file`).to.equal(true);
      expect(readFileSync(path, 'utf8'), `${path} keeps its bytes`).to.equal(content);
      expect(now.ino, `${path} is the same file`).to.equal(planted.ino);
      expect(now.mtimeMs, `${path} was not written`).to.equal(planted.mtimeMs);
      expect(neighboursOf(path), `nothing appeared beside ${path}`).to.deep.equal(neighbours);
    },
  };
};

/** Checks every canary; call it after the daemons have had their chance. */
export const assertCanariesUntouched = (canaries: Iterable<Canary>): void => {
  for (const canary of canaries) canary.assertUntouched();
};
