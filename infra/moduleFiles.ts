import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The service runs compiled (dist/, bundled by bin/build.mjs: what `npm start`, `bin/dms` and
 * the cluster's processes run) or from its TypeScript sources under tsx (tests, `npm run dev`).
 * The few places that name a module file rather than import it (thread entries, the cluster's
 * worker) ask here, so the same code finds its files both ways.
 */

/**
 * An entry point started as a thread or a process: `source` (relative to the calling module,
 * `from` being its import.meta.url) when running from sources, else `dist/<compiled>.js`, an
 * entry point of bin/build.mjs (a bundle's modules do not keep their folders).
 */
export const entryModule = (from: string, source: string, compiled: string): URL =>
  from.endsWith('.ts') ? new URL(source, from) : pathToFileURL(join(packageRoot(from), 'dist', `${compiled}.js`));

/**
 * A worker thread running the module `entry`. Compiled, the thread loads it directly. From
 * sources it loads a bootstrap that registers tsx first (worker threads do not inherit
 * `--import tsx` on Node 20), which then imports `entry`; the thread's workerData is the same
 * both ways, plus `threadEntry` from sources.
 */
export const startThread = (entry: URL, options: WorkerOptions = {}): Worker =>
  entry.pathname.endsWith('.ts')
    ? new Worker(new URL('./tsThreadBootstrap.mjs', import.meta.url), {
        ...options,
        workerData: { ...(isObject(options.workerData) ? options.workerData : {}), threadEntry: entry.href },
      })
    : new Worker(entry, options);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * The package's root folder (where package.json is): files served as they are, such as the web
 * console's, sit there, outside both `dist/` and the sources' folders.
 */
export const packageRoot = (from: string): string => {
  let folder = dirname(new URL(from).pathname);
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`No package.json above ${from}`);
    folder = parent;
  }
  return folder;
};

let version: string | undefined;

/** The version in package.json (read once). */
export const packageVersion = (): string => {
  if (version === undefined) {
    const parsed: unknown = JSON.parse(readFileSync(join(packageRoot(import.meta.url), 'package.json'), 'utf8'));
    version =
      typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string'
        ? parsed.version
        : 'unknown';
  }
  return version;
};
