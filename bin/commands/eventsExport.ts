import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { exportEventLog } from '../../infra/eventstore/eventLog.ts';
import { openStores } from '../../infra/stores.ts';
import { grouped, Progress } from './progress.ts';

/**
 * `dms events export [file]`: writes the whole event log as NDJSON (infra/eventstore/eventLog.ts)
 * to the file, or to stdout, with progress on stderr. It reads `$all` as it is when each page is
 * read: for a consistent backup of a running service, the log only grows, so the export holds
 * every event up to the last one it wrote.
 */
export const eventsExportCommand = async (config: ServiceConfig, file: string | undefined): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  const output: Writable = file ? createWriteStream(file) : process.stdout;
  try {
    const head = await eventStore.headPosition();
    const progress = new Progress('export', 'events');
    const started = Date.now();
    let events = 0;
    for await (const chunk of exportEventLog(eventStore, {
      onProgress: (count, position) => {
        events = count;
        progress.update(count, head === 0n ? 1 : Number(position) / Number(head));
      },
    })) {
      if (!output.write(chunk)) await once(output, 'drain');
    }
    progress.finish();
    if (file) {
      output.end();
      await once(output, 'finish');
    }
    const seconds = (Date.now() - started) / 1000;
    console.error(`exported ${grouped(events)} events in ${seconds.toFixed(1)} s${file ? ` to ${file}` : ''}`);
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
