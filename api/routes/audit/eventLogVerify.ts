import { Readable } from 'node:stream';
import { loadCaller } from '../../../commands/caller.ts';
import { OPERATIONS_PERMISSIONS } from '../../../domain/permission/operationsPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied } from '../../../domain/shared/errors.ts';
import { HashChainChecker, type ChainBreak } from '../../../infra/eventstore/hashChains.ts';
import type { EventStore } from '../../../infra/eventstore/eventStore.ts';
import { NDJSON_TYPE, STREAM_ONLY } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/** Events read per batch: the CLI's batch (infra/eventstore/hashChains.ts). */
const BATCH = 1000;
/** A progress line at most this often, so a fast check of a large log is not all progress lines. */
const PROGRESS_EVERY_MS = 250;

/**
 * `POST /audit/verify` (admins; our own route): `dms audit verify` from the browser. It recomputes
 * every stream's hash chain through `$all` and streams NDJSON as it goes: progress lines
 * (`{"progress": {"events", "position", "head"}}`, a few a second) and, last, the verdict
 * (`{"verdict": {"holds", "events", "streams", ..., "first_break"}}`). The check runs as long as
 * the request: a client that goes away stops it. Nothing is kept between requests, so it works the
 * same whichever API process answers.
 */
export const registerEventLogVerifyRoute = (routes: RouteTable, services: Services): void => {
  routes.post(
    '/audit/verify',
    {
      accept: STREAM_ONLY,
      body: 'none',
      summary: 'Recomputes every stream’s hash chain, streaming progress and then the verdict as NDJSON (admins).',
      success: {
        status: 200,
        type: NDJSON_TYPE,
        description: 'Lines `{"progress": {...}}`, then one `{"verdict": {...}}` naming the first broken link or none.',
      },
      raises: [AccessDenied],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(
        OPERATIONS_PERMISSIONS.verifyEventLog(caller),
        `Account ${caller.account} can not verify the event log`,
      );
      const lines = verifyLines(services.commands.eventStore);
      ctx.status = 200;
      ctx.set('Content-Type', NDJSON_TYPE);
      // Each line is written as it comes (sendStream groups lines into large chunks).
      ctx.body = Readable.from(lines, { objectMode: false });
    },
  );
};

async function* verifyLines(eventStore: EventStore): AsyncGenerator<string> {
  const started = Date.now();
  const head = Number(await eventStore.headPosition());
  const checker = new HashChainChecker();
  let after = 0n;
  let lastProgress = 0;
  let firstBreak: ChainBreak | undefined;
  yield `${JSON.stringify({ progress: { events: 0, position: 0, head } })}\n`;
  reading: for (;;) {
    const batch = await eventStore.readAll({ after, maxCount: BATCH });
    if (batch.length === 0) break;
    for (const event of batch) {
      firstBreak = checker.check(event);
      if (firstBreak) break reading;
    }
    after = batch[batch.length - 1]!.position;
    if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      yield `${JSON.stringify({ progress: { events: checker.events, position: Number(after), head } })}\n`;
    }
  }
  const verdict = {
    holds: !firstBreak,
    events: checker.events,
    streams: checker.streams,
    hashed: checker.hashed,
    unhashed: checker.unhashed,
    truncated_streams: checker.truncatedStreams,
    seconds: (Date.now() - started) / 1000,
    first_break: firstBreak
      ? {
          stream: firstBreak.streamName,
          revision: Number(firstBreak.revision),
          position: Number(firstBreak.position),
          reason: firstBreak.reason,
          detail: firstBreak.detail,
        }
      : null,
  };
  yield `${JSON.stringify({ verdict })}\n`;
}
