import { writeFileSync } from 'node:fs';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { AnchorError, signAnchor, takeAnchor, type LogAnchor } from '../../infra/eventstore/logAnchor.ts';
import { openStores } from '../../infra/stores.ts';
import { logChainModeOf, readKey } from './auditVerify.ts';
import { Progress } from './progress.ts';

/**
 * `dms audit anchor [file]`: writes an anchor of the log chain (infra/eventstore/logAnchor.ts) to
 * the file, or to stdout, to be kept away from the service and given later to `dms audit verify
 * --anchor`. `--key-file` signs it with HMAC-SHA256. On SQLite it reads one event; on
 * EventStoreDB it reads the whole log (progress on stderr). Exit status 1 when there is nothing
 * to anchor yet or the key cannot be read.
 */
export const auditAnchorCommand = async (
  config: ServiceConfig,
  file: string | undefined,
  options: Readonly<{ keyFile?: string; checkpointEvery?: number }> = {},
): Promise<number> => {
  let key: Buffer | undefined;
  try {
    key = options.keyFile === undefined ? undefined : readKey(options.keyFile);
  } catch (error) {
    if (!(error instanceof AnchorError)) throw error;
    console.error(error.message);
    return 1;
  }
  const mode = logChainModeOf(config);
  const { eventStore, readStore } = await openStores(config);
  let anchor: LogAnchor;
  try {
    const head = await eventStore.headPosition();
    const progress = mode === 'computed' ? new Progress('anchor', 'events') : undefined;
    anchor = await takeAnchor(eventStore, mode, {
      ...(options.checkpointEvery !== undefined ? { checkpointEvery: options.checkpointEvery } : {}),
      onProgress: (events, position) => progress?.update(events, head === 0n ? 1 : Number(position) / Number(head)),
    });
    progress?.finish();
  } catch (error) {
    if (!(error instanceof AnchorError)) throw error;
    console.error(error.message);
    return 1;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
  const text = `${JSON.stringify(key ? signAnchor(anchor, key) : anchor, null, 2)}\n`;
  if (file) writeFileSync(file, text);
  else process.stdout.write(text);
  console.error(
    `anchored the log chain at position ${anchor.head.position} (${anchor.head.log_hash})${key ? ', signed' : ''}${file ? ` in ${file}` : ''}: keep it away from this machine`,
  );
  return 0;
};
