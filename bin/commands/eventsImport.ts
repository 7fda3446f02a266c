import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { EventImportError, importEventLog } from '../../infra/eventstore/eventLog.ts';
import { openEventLogForTools } from '../../infra/stores.ts';
import { grouped, Progress } from './progress.ts';

/**
 * `dms events import [file]`: appends an exported log (the file, or stdin) into the configured
 * event store, which must be empty: ids, streams, revisions, metadata and order as exported,
 * hashes checked as the lines come and computed again by the store. Start the service on the
 * store afterwards: every projection builds from the imported log (the read store should be
 * empty too, or its projections rebuilt).
 *
 * Nothing else may write to the store during an import, so on KurrentDB it is appended stream by
 * stream (openEventLogForTools), exactly as exported, whatever the server's version.
 */
export const eventsImportCommand = async (config: ServiceConfig, file: string | undefined): Promise<number> => {
  const eventStore = await openEventLogForTools(config);
  const input: Readable = file ? createReadStream(file) : process.stdin;
  const size = file ? statSync(file).size : undefined;
  let bytes = 0;
  input.on(
    'data',
    (chunk: Buffer | string) => (bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length),
  );
  const progress = new Progress('import', 'events');
  const started = Date.now();
  try {
    const report = await importEventLog(eventStore, createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }), {
      onProgress: (events) => progress.update(events, size ? bytes / size : undefined),
    });
    progress.finish();
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `imported ${grouped(report.events)} events of ${grouped(report.streams)} streams in ${seconds.toFixed(1)} s, ${grouped(Math.round(report.events / Math.max(seconds, 0.001)))} events/s`,
    );
    console.log(
      report.movedPositions === 0
        ? 'every event kept its position'
        : `${grouped(report.movedPositions)} appends got other positions than exported (expected on EventStoreDB)`,
    );
    if (report.unhashed > 0)
      console.log(`${grouped(report.unhashed)} events came without a hash (exported before hashing) and have one now`);
    return 0;
  } catch (error) {
    progress.finish();
    if (error instanceof EventImportError) {
      console.error(`import stopped: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    input.destroy();
    await eventStore.close();
  }
};
