import { loadCaller } from '../../../commands/caller.ts';
import { OPERATIONS_PERMISSIONS } from '../../../domain/permission/operationsPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied, ResourceTemporaryUnavailable } from '../../../domain/shared/errors.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { DaemonRoleStatus, Services } from '../../services.ts';

/**
 * `GET /admin/daemons` (admins; our own route): every daemon role with its trigger, its queue
 * (jobs waiting, active, delayed, failed, completed), its last cycle (when, how long, what it did
 * and skipped, or its error) and its next planned run: `dms workers status --json`, for the
 * console. 503 when this process knows no Redis to ask (`dms api` without REDIS_URL, apart from
 * the `dms serve` whose data directory it shares).
 */
export const registerDaemonRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/admin/daemons',
    {
      accept: JSON_ONLY,
      summary: 'Every daemon role: trigger, queue depths, last cycle with what it skipped, next run (admins).',
      raises: [AccessDenied, ResourceTemporaryUnavailable],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(OPERATIONS_PERMISSIONS.readDaemons(caller), `Account ${caller.account} can not read the daemons`);
      const roles = await services.daemons?.();
      if (!roles)
        throw new ResourceTemporaryUnavailable(
          'No Redis to ask for the daemons: set REDIS_URL for this process, or run it beside `dms serve` on its data directory.',
        );
      sendJson(ctx, roles.map(daemonJson));
    },
  );
};

const daemonJson = (role: DaemonRoleStatus) => ({
  role: role.role,
  kind: role.kind,
  trigger: role.trigger,
  counts: role.counts,
  next_run_at: role.nextRunAt,
  last_cycle: role.lastCycle
    ? {
        job_id: role.lastCycle.jobId,
        started_at: role.lastCycle.startedAt,
        duration_ms: role.lastCycle.durationMs,
        done: role.lastCycle.done,
        skipped: role.lastCycle.skipped,
        skipped_sample: role.lastCycle.skippedSample,
        detail: role.lastCycle.detail ?? null,
        error: role.lastCycle.error,
      }
    : null,
});
