// Worker threads do not inherit `--import tsx` on Node 20: register the TypeScript loader here,
// then load the log writer's thread (sqliteWriterThreadMain.ts).
import { register } from 'tsx/esm/api';

register();
await import('./sqliteWriterThreadMain.ts');
