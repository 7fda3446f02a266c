import { loadCaller } from '../../../commands/caller.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { AccessDenied, ValueError } from '../../../domain/shared/errors.ts';
import { MessageFeed } from '../../../projections/message/messageFeed.ts';
import { sendStream, STREAM_ONLY } from '../../http.ts';
import { queryOf, queryText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/** `?after=`: a global position of the event log (a line's `position`), whole and not negative. */
const afterOf = (text: string | undefined): bigint => {
  if (text === undefined) return 0n;
  if (!/^\d{1,19}$/.test(text)) throw new ValueError(`after must be a position of the event log, not '${text}'`);
  return BigInt(text);
};

const messagesQuery = queryOf({
  after: convertedBy(queryText(), afterOf).meta({
    description: 'A position of the event log: the messages after it.',
    pattern: '^\\d{1,19}$',
  }),
});

async function* lines(feed: MessageFeed, after: bigint): AsyncGenerator<object> {
  for await (const page of feed.after(after))
    for (const { position, message } of page)
      yield {
        event_type: message.eventType,
        payload: message.payload,
        created_at: rucioDateOrNull(message.createdAt),
        position: Number(position),
      };
}

/**
 * `GET /admin/messages` (our own prefix, admins only): the messages of Rucio's `messages` table
 * (rule notifications, transfer, deletion and DID events), oldest first, each with the position of
 * the event that gave it; `?after=<position>` starts after one. They come from the event log
 * through the same feed the hermes role delivers to the message broker (docs/operations.md,
 * "Messages to a broker"), so this lists what a broker is sent, whether one is configured or not.
 */
export const registerMessageRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/admin/messages',
    {
      accept: STREAM_ONLY,
      summary:
        'The messages Rucio sends to a broker (rules, transfers, deletions, DIDs), oldest first, from `?after=<position>` (admins).',
      query: messagesQuery,
      raises: [AccessDenied, ValueError],
    },
    async (ctx, { query }) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(isAdmin(caller), `Account ${caller.account} can not list messages`);
      const { eventStore, upcasters } = services.commands;
      await sendStream(ctx, lines(new MessageFeed(eventStore, upcasters), query.after));
    },
  );
};
