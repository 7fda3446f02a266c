import { loadCaller } from '../../../commands/caller.ts';
import { OPERATIONS_PERMISSIONS } from '../../../domain/permission/operationsPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied } from '../../../domain/shared/errors.ts';
import { transferStatus } from '../../../projections/request/transferStatus.ts';
import { transferThroughput } from '../../../projections/request/transferThroughput.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { dateOf } from '../../../infra/clock.ts';

/**
 * `GET /admin/transfers` (admins; our own route): what `dms transfers status` prints, as JSON,
 * with the last hour's throughput in 5-minute buckets (files and bytes done, files failed), for
 * the console's transfers page.
 */
export const registerTransferStatusRoute = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/admin/transfers',
    {
      accept: JSON_ONLY,
      summary:
        'Transfer requests per state and per link, the oldest waiting, the last hour’s failures and throughput (admins).',
      raises: [AccessDenied],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(
        OPERATIONS_PERMISSIONS.readTransfers(caller),
        `Account ${caller.account} can not read the transfers' status`,
      );
      const now = dateOf(services.clock);
      const status = await transferStatus(services.readModels, now);
      const throughput = await transferThroughput(services.readModels, now);
      sendJson(ctx, {
        at: status.at,
        states: status.states,
        links: status.links,
        oldest_waiting: status.oldestWaiting.map((request) => ({
          state: request.state,
          request_id: request.requestId,
          scope: request.scope,
          name: request.name,
          destination: request.destination,
          requested_at: request.requestedAt,
        })),
        failures_last_hour: {
          transfers_failed: status.failuresLastHour.transfersFailed,
          archived: status.failuresLastHour.archived,
        },
        throughput: throughput.map((bucket) => ({
          at: bucket.at,
          files_done: bucket.filesDone,
          bytes_done: bucket.bytesDone,
          files_failed: bucket.filesFailed,
        })),
      });
    },
  );
};
