import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { openStores } from '../../infra/stores.ts';

/** One event as `replay` shows it: revision, position, time, the acting account, the request. */
const replayed = (event: RecordedEvent) => ({
  revision: Number(event.revision),
  position: Number(event.position),
  type: event.type,
  at: event.metadata.at,
  account: event.metadata.account,
  requestId: event.metadata.requestId,
  data: event.data,
});

/**
 * Prints the events of one stream (e.g. `did-user.jdoe:file1`, `rule-<id>`) as JSON lines, oldest
 * first, with revision, position, time and the acting account: an auditor's view of its history.
 * `json` prints them as one document instead, `{ stream, events: [...] }`. Exit status 1 when the
 * stream has no events from `from` on.
 */
export const replayCommand = async (
  config: ServiceConfig,
  streamName: string,
  options: Readonly<{ from?: bigint; json?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const events = await eventStore.readStream(streamName, { fromRevision: options.from ?? 0n });
    if (options.json) console.log(JSON.stringify({ stream: streamName, events: events.map(replayed) }, null, 2));
    else for (const event of events) console.log(JSON.stringify(replayed(event)));
    if (events.length === 0) console.error(`no events in stream ${streamName}`);
    return events.length === 0 ? 1 : 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
