// The production build: the service's TypeScript bundled into dist/ by esbuild, one module per
// entry point below and the code they share in dist/chunks/. `npm ci` runs it (the `prepare`
// script), and so does `npm test` (`pretest`), so that what the tests start as processes is the
// code of the sources. Types are checked by `npm run lint` (tsc), not here.
//
// Why a bundle rather than tsc's one file per module: a process of the service loads ~600 of our
// modules and ~2 000 of its libraries' (zod and jose are hundreds of small files each); opening
// and linking them was 0.7 s of CPU per process, most of the start. Bundled, a process loads a
// few files: 0.05-0.1 s.
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');

/**
 * Every file the service starts a process or a thread on, named as in infra/moduleFiles.ts's
 * `entryModule` calls: the command line, the cluster's API worker, the projection thread and
 * the event log's writer thread.
 */
export const ENTRY_POINTS = {
  dms: 'bin/dms.ts',
  apiWorker: 'bin/cluster/apiWorkerMain.ts',
  projectorThread: 'projections/runtime/projectorThreadMain.ts',
  logWriterThread: 'infra/eventstore/sqliteWriterThreadMain.ts',
};

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const started = performance.now();
await build({
  absWorkingDir: root,
  entryPoints: ENTRY_POINTS,
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // Native addons, and drivers loaded only when configured (EventStoreDB, MongoDB) stay packages.
  external: ['better-sqlite3', 'msgpackr-extract', '@kurrent/*', 'mongodb'],
  // Libraries written as CommonJS call `require`; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// What the command line and the tests compare with the sources' times to tell a stale build.
writeFileSync(join(outdir, 'BUILT'), `${new Date().toISOString()}\n`);
console.log(`built dist/ in ${Math.round(performance.now() - started)} ms`);
