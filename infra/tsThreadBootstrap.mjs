// A worker thread started from the TypeScript sources (infra/moduleFiles.ts, startThread):
// threads do not inherit `--import tsx` on Node 20, so register the loader here, then load the
// thread's entry named by the parent. Compiled, threads load their entry directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.threadEntry);
