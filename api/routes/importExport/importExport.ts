import { loadCaller } from '../../../commands/caller.ts';
import { importData } from '../../../commands/importExport/importData.ts';
import { requirePermission } from '../../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../../domain/permission/rsePolicy.ts';
import { availabilityInteger } from '../../../domain/rse/availability.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { activeRses, everyDistance } from '../../../projections/rse/rseQueries.ts';
import type { RseDistanceDocument, RseDocument } from '../../../projections/rse/rsesProjection.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { DATA_IMPORT } from './importRequest.ts';
import { jsonObjectBodyOf, queryBoolean, queryOf } from '../../params.ts';
import { created, type RouteTable } from '../../route.ts';
import { defaultLfn2pfnAlgorithm, lfn2pfnAlgorithmOf, rseSettings } from '../rse/rseViews.ts';
import type { Services } from '../../services.ts';

/** One RSE as Rucio's export_rse writes it: the record (without ISP, ASN, continent), settings, protocols, MinFreeSpace. */
const exportedRse = (document: RseDocument, defaultAlgorithm: string) => {
  const { ISP: _isp, ASN: _asn, continent: _continent, ...record } = document.properties;
  const settings = rseSettings(document, defaultAlgorithm);
  return {
    id: document.id,
    rse: document.rse,
    vo: 'def',
    ...record,
    availability: availabilityInteger(document.properties),
    created_at: formatRucioDate(new Date(document.createdAt)),
    updated_at: formatRucioDate(new Date(document.updatedAt)),
    attributes: document.attributes,
    lfn2pfn_algorithm: lfn2pfnAlgorithmOf(document, defaultAlgorithm),
    verify_checksum: settings.verify_checksum,
    credentials: settings.credentials,
    protocols: settings.protocols,
    MinFreeSpace: document.limits.MinFreeSpace ?? null,
  };
};

const exportedDistance = (distance: RseDistanceDocument) => ({
  src_rse_id: distance.srcRseId,
  dest_rse_id: distance.destRseId,
  distance: distance.distance,
  ranking: distance.distance,
  created_at: formatRucioDate(new Date(distance.createdAt)),
  updated_at: formatRucioDate(new Date(distance.updatedAt)),
});

/** `GET /export` and `POST /import` (§1.9, §1.12): one deployment's RSEs and distances seed another. */
export const registerImportExportRoutes = (routes: RouteTable, services: Services): void => {
  for (const path of ['/export', '/export/']) {
    routes.get(
      path,
      {
        accept: JSON_ONLY,
        summary: 'Every RSE (record, attributes, protocols, settings) and distance, for another deployment’s import.',
        query: queryOf({ distance: queryBoolean(true).describe('False: without the distances.') }),
      },
      async (ctx, { query }) => {
        const caller = await loadCaller(services.commands, ctx.state.issuer!);
        requirePermission(RSE_PERMISSIONS.exportData(caller), caller, 'export data');
        const withDistances = query.distance;
        const defaultAlgorithm = await defaultLfn2pfnAlgorithm(services);
        const rses: Record<string, unknown> = {};
        const live = new Set<string>();
        for await (const document of activeRses(services.readModels)) {
          rses[document.rse] = exportedRse(document, defaultAlgorithm);
          live.add(document.id);
        }
        if (!withDistances) return sendJson(ctx, { rses });
        const distances: Record<string, Record<string, unknown>> = {};
        for await (const distance of everyDistance(services.readModels)) {
          if (!live.has(distance.srcRseId) || !live.has(distance.destRseId)) continue;
          (distances[distance.srcRse] ??= {})[distance.destRse] = exportedDistance(distance);
        }
        sendJson(ctx, { rses, distances });
      },
    );
    routes.post(
      path.replace('export', 'import'),
      {
        summary: 'Creates or updates the RSEs, distances and accounts of an export, all or nothing.',
        body: jsonObjectBodyOf(DATA_IMPORT, {
          description: '`rses`, `distances`, `accounts`, as `GET /export` answers.',
        }),
      },
      async (ctx, { body: data }) => {
        await created(ctx, services, (metadata) => importData(services.commands, data, metadata));
      },
    );
  }
};
