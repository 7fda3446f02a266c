import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';

/**
 * Prints the events of one stream (e.g. `did-user.jdoe:file1`, `rule-<id>`) as JSON lines, oldest
 * first, with revision, position, time and the acting account: an auditor's view of its history.
 */
export const replayCommand = async (config: ServiceConfig, streamName: string, options: string[]): Promise<number> => {
  const fromIndex = options.indexOf('--from');
  const fromRevision = fromIndex >= 0 ? BigInt(options[fromIndex + 1] ?? '0') : 0n;
  const { eventStore, readStore } = await openStores(config);
  try {
    const events = await eventStore.readStream(streamName, { fromRevision });
    for (const event of events) {
      console.log(
        JSON.stringify({
          revision: Number(event.revision),
          position: Number(event.position),
          type: event.type,
          at: event.metadata.at,
          account: event.metadata.account,
          requestId: event.metadata.requestId,
          data: event.data,
        }),
      );
    }
    if (events.length === 0) console.error(`no events in stream ${streamName}`);
    return events.length === 0 ? 1 : 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
