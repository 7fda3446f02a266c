// Worker threads do not inherit `--import tsx` on Node 20: register the TypeScript loader here,
// then load the thread's TypeScript entry point named by the parent.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
