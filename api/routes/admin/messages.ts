import { loadCaller } from '../../../commands/caller.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { AccessDenied } from '../../../domain/shared/errors.ts';
import { ruleMessages } from '../../../projections/rule/ruleQueries.ts';
import { mapStream, sendStream, STREAM_ONLY } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * `GET /admin/messages` (our own prefix, admins only): the messages rules emitted (RULE_OK,
 * RULE_PROGRESS, DATASETLOCK_OK), oldest first, as Rucio's messages table would hand them to a
 * broker. Delivering them to one is not part of this service yet.
 */
export const registerMessageRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/admin/messages',
    {
      accept: STREAM_ONLY,
      summary: 'The messages rules emitted (RULE_OK, RULE_PROGRESS, DATASETLOCK_OK), oldest first (admins).',
      raises: [AccessDenied],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(isAdmin(caller), `Account ${caller.account} can not list messages`);
      await sendStream(
        ctx,
        mapStream(ruleMessages(services.readModels), (message) => ({
          event_type: message.event_type,
          payload: message.payload,
          created_at: rucioDateOrNull(message.created_at),
        })),
      );
    },
  );
};
