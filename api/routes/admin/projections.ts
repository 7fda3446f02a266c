import { loadCaller } from '../../../commands/caller.ts';
import { AUDIT_PERMISSIONS } from '../../../domain/permission/auditPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied, ProjectionNotFound } from '../../../domain/shared/errors.ts';
import { allProjections } from '../../../projections/index.ts';
import {
  projectionReports,
  requestProjectionRebuild,
  type ProjectionReport,
} from '../../../projections/runtime/projectionStatus.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { pathOf, pathText } from '../../params.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * The projections for operators (our own prefix; Rucio has none), from what the read store says,
 * whichever process projects:
 *
 * - `GET /admin/projections` (admins): per projection its group, version, serving generation,
 *   checkpoint, the head of the log, the lag, its status, and a rebuild under way with its
 *   progress: what `dms projections status` prints.
 * - `POST /admin/projections/{name}/rebuild` (root): asks for a rebuild into a new generation
 *   beside the serving one; the projector picks it up within a second and switches reads once it
 *   has caught up. Answers 202 with the generation, or the one of a rebuild already under way.
 */
export const registerProjectionRoutes = (routes: RouteTable, services: Services): void => {
  const stores = services.readModels.stores;

  routes.get(
    '/admin/projections',
    {
      accept: JSON_ONLY,
      summary: 'Every projection: version, generation, checkpoint, head, lag, status, a rebuild under way (admins).',
      raises: [AccessDenied],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(AUDIT_PERMISSIONS.readProjections(caller), `Account ${caller.account} can not read the projections`);
      sendJson(ctx, (await projectionReports(services.commands.eventStore, stores)).map(projectionReportJson));
    },
  );

  const rebuild = {
    params: pathOf({ name: pathText() }),
    accept: JSON_ONLY,
    summary: 'Asks the projector to rebuild a projection into a new generation (root).',
    body: 'none',
    success: { status: 202, description: 'The generation being built, and whether a rebuild was already under way.' },
    raises: [ProjectionNotFound],
  } satisfies RouteOptions;
  routes.post('/admin/projections/:name/rebuild', rebuild, async (ctx, { params }) => {
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    allowOnly(AUDIT_PERMISSIONS.rebuildProjection(caller), `Account ${caller.account} can not rebuild projections`);
    const projection = allProjections.find((candidate) => candidate.name === params.name);
    if (!projection)
      throw new ProjectionNotFound(
        `No projection named '${params.name}'; known: ${allProjections.map((candidate) => candidate.name).join(', ')}`,
      );
    const request = await requestProjectionRebuild(stores, projection);
    sendJson(
      ctx,
      {
        name: projection.name,
        generation: request.generation,
        already_under_way: request.alreadyUnderWay,
        projector_running: request.projectorRunning,
      },
      202,
    );
  });
};

/** A projection's report as JSON (positions as numbers): this route's answer, and `dms projections status --json`. */
export const projectionReportJson = (report: ProjectionReport): Record<string, unknown> => ({
  name: report.name,
  group: report.group,
  version: report.version,
  generation: report.generation ?? null,
  checkpoint: Number(report.checkpoint),
  head: Number(report.head),
  lag: Number(report.lag),
  status: report.status,
  error: report.error ?? null,
  rebuild: report.rebuild
    ? {
        generation: report.rebuild.generation,
        version: report.rebuild.version,
        checkpoint: Number(report.rebuild.checkpoint),
        lag: Number(report.rebuild.lag),
        progress: report.rebuild.progress,
        requested_at: report.rebuild.requestedAt,
        error: report.rebuild.error ?? null,
      }
    : null,
});
