import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The folders of the service's sources, which bin/build.mjs bundles into dist/. */
const SOURCE_FOLDERS = ['api', 'bin', 'commands', 'domain', 'infra', 'projections', 'workers'];

const newestSource = (folder: string): number => {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
};

const current = new Map<string, boolean>();

/** Whether `root`'s dist/ was built after its last source changed (asked once per tree and run). */
const builtFromSources = (root: string): boolean => {
  let answer = current.get(root);
  if (answer === undefined) {
    const stamp = join(root, 'dist', 'BUILT');
    answer =
      existsSync(join(root, 'dist', 'dms.js')) &&
      existsSync(stamp) &&
      Math.max(...SOURCE_FOLDERS.map((folder) => newestSource(join(root, folder)))) <= statSync(stamp).mtimeMs;
    if (!answer && existsSync(join(root, 'bin', 'build.mjs')))
      process.stderr.write(
        `dms: ${root}/dist is missing or older than the sources: processes run from the sources through tsx (npm run build makes them start faster)\n`,
      );
    current.set(root, answer);
  }
  return answer;
};

/**
 * How to run `dms` as a process of its own from the tree at `root` (default this one): the
 * compiled build, as operators run it, when it is as new as the sources (`npm test` builds it
 * first); else the sources through tsx (a test run by hand after an edit, or an older tree a
 * benchmark compares with, which has no build). `nodeArgs` go to node before the entry.
 */
export const dmsCommand = (
  root: string = ROOT,
  nodeArgs: readonly string[] = [],
): Readonly<{ command: string; args: readonly string[] }> => ({
  command: process.execPath,
  args: builtFromSources(root)
    ? [...nodeArgs, '--enable-source-maps', join(root, 'dist', 'dms.js')]
    : [...nodeArgs, '--import', 'tsx', join(root, 'bin', 'dms.ts')],
});
