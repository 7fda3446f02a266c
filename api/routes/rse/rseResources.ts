import { z } from 'zod';
import {
  addRseDistance,
  addRseQosPolicy,
  removeRseDistance,
  removeRseLimit,
  removeRseQosPolicy,
  setRseLimit,
  setRseUsage,
  updateRseDistance,
} from '../../../commands/rse/rseCommands.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { KeyError, RSENotFound } from '../../../domain/shared/errors.ts';
import { findLocalLimit } from '../../../projections/account/accountLimitQueries.ts';
import { everyAccount } from '../../../projections/account/accountQueries.ts';
import { accountUsageOn, usagesOnRse } from '../../../projections/account/accountUsageQueries.ts';
import { findDistance, rseUsageHistory } from '../../../projections/rse/rseQueries.ts';
import type { RseDocument } from '../../../projections/rse/rsesProjection.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, sendText, STREAM_ONLY } from '../../http.ts';
import { fromList } from '../../listSource.ts';
import { jsonObjectBodyOf, orNull, pathOf, pathText, queryBoolean, queryOf, queryText } from '../../params.ts';
import { refusedAs } from '../../routeInput.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';
import { created, ok, type RouteTable, runCommand } from '../../route.ts';
import { integerIn } from './rseRequests.ts';
import { activeRse, distanceView } from './rseViews.ts';
import type { Services } from '../../services.ts';

/** A required text parameter: missing, empty or not text is Rucio's KeyError. */
const requiredText = () => refusedAs(z.string().min(1), ({ key }) => new KeyError(`'${String(key)}' not defined`));

/**
 * `distance`, else the deprecated `ranking` (read only when `distance` is absent or null); both
 * absent is a distance of null.
 */
const DISTANCE = z
  .preprocess(
    (body) =>
      isRecord(body)
        ? (body.distance ?? null) === null
          ? { ranking: body.ranking }
          : { distance: body.distance }
        : body,
    z.looseObject({ distance: orNull(integerIn()), ranking: orNull(integerIn()) }),
  )
  .transform(({ distance, ranking }) => distance ?? ranking);

const USAGE = z.looseObject({
  source: requiredText(),
  used: orNull(integerIn()),
  free: orNull(integerIn()),
  files: orNull(integerIn()),
});

const LIMIT = z.looseObject({ name: requiredText(), value: integerIn() });

const linkPath = pathOf({ source: pathText(), destination: pathText() });
const rsePath = pathOf({ rse: pathText() });

/** Usage, limits, QoS policies, distances and per-account usage of RSEs (§1.21). */
export const registerRseResourceRoutes = (routes: RouteTable, services: Services): void => {
  /** The accounts with bytes on an RSE, biggest first, as `per_account` lists them. */
  const accountUsagesOn = async (document: RseDocument, total: number) => {
    const usages = await usagesOnRse(services.readModels, document.id);
    return usages
      .filter((usage) => usage.bytes !== 0)
      .sort((a, b) => b.bytes - a.bytes)
      .map((usage) => ({
        used: usage.bytes,
        account: usage.account,
        percentage: total ? Math.round((usage.bytes / total) * 10_000) / 100 : 0,
      }));
  };

  routes.get(
    '/rses/:source/distances/:destination',
    {
      params: linkPath,
      accept: JSON_ONLY,
      summary: 'The distance from one RSE to another (a list of at most one).',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const [source, destination] = [
        await activeRse(services, params.source),
        await activeRse(services, params.destination),
      ];
      const found = await findDistance(services.readModels, source.id, destination.id);
      sendJson(ctx, found ? [distanceView(found)] : []);
    },
  );
  routes.post(
    '/rses/:source/distances/:destination',
    {
      params: linkPath,
      summary: 'Sets the distance from one RSE to another.',
      body: jsonObjectBodyOf(DISTANCE, { description: '`distance` (or `ranking`): a whole number.' }),
      raises: [RSENotFound],
    },
    async (ctx, { params, body: distance }) => {
      await created(ctx, services, (metadata) =>
        addRseDistance(
          services.commands,
          { source: params.source, destination: params.destination, distance },
          metadata,
        ),
      );
    },
  );
  routes.put(
    '/rses/:source/distances/:destination',
    {
      params: linkPath,
      summary: 'Changes the distance from one RSE to another.',
      body: jsonObjectBodyOf(DISTANCE, { description: '`distance` (or `ranking`).' }),
      raises: [RSENotFound],
    },
    async (ctx, { params, body: distance }) => {
      await ok(ctx, services, (metadata) =>
        updateRseDistance(
          services.commands,
          { source: params.source, destination: params.destination, distance },
          metadata,
        ),
      );
    },
  );
  routes.delete(
    '/rses/:source/distances/:destination',
    {
      params: linkPath,
      summary: 'Removes the distance from one RSE to another.',
      success: { status: 200, type: 'text/html; charset=utf-8', description: 'The text "Deleted".' },
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      await runCommand(ctx, services, (metadata) =>
        removeRseDistance(services.commands, { source: params.source, destination: params.destination }, metadata),
      );
      sendText(ctx, 'Deleted');
    },
  );

  /** Every account with its usage and quota on the RSE: lines of JSON labelled application/json, as in Rucio. */
  routes.get(
    '/rses/:rse/accounts/usage',
    {
      params: rsePath,
      accept: JSON_ONLY,
      summary: 'Every account’s files, bytes and quota on the RSE (JSON lines, typed application/json as Rucio does).',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const document = await activeRse(services, params.rse);
      const accounts = everyAccount(services.readModels);
      async function* lines() {
        for await (const account of accounts) {
          const usage = await accountUsageOn(services.readModels, account.account, document.id);
          const limit = await findLocalLimit(services.readModels, account.account, document.id);
          yield {
            rse_id: document.id,
            rse: document.rse,
            account: account.account,
            used_files: usage?.files ?? 0,
            used_bytes: usage?.bytes ?? 0,
            quota_bytes: limit?.bytes ?? null,
          };
        }
      }
      await sendStream(ctx, lines(), 'application/json');
    },
  );

  routes.get(
    '/rses/:rse/usage',
    {
      params: rsePath,
      accept: STREAM_ONLY,
      summary: 'The usage of an RSE per source (rucio, storage, ...).',
      query: queryOf({
        source: queryText().describe('Only this source.'),
        per_account: queryBoolean(false).describe('True: with each account’s share of the rucio usage.'),
      }),
      raises: [RSENotFound],
    },
    async (ctx, { params, query }) => {
      const document = await activeRse(services, params.rse);
      const { per_account: perAccount, source } = query;
      const entries = [];
      for (const [name, usage] of Object.entries(document.usage).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (source && name !== source) continue;
        const total = (usage.free ?? 0) + (usage.used ?? 0);
        const entry = {
          rse_id: document.id,
          source: name,
          used: usage.used,
          free: usage.free,
          total,
          files: usage.files,
          updated_at: formatRucioDate(new Date(usage.updatedAt)),
          rse: document.rse,
        };
        entries.push(
          perAccount && name === 'rucio' ? { ...entry, account_usages: await accountUsagesOn(document, total) } : entry,
        );
      }
      await sendStream(ctx, fromList(entries));
    },
  );
  routes.put(
    '/rses/:rse/usage',
    {
      params: rsePath,
      summary: 'Records the usage of an RSE as a source measured it.',
      body: jsonObjectBodyOf(USAGE, { description: '`source`, `used`, `free`, `files`.' }),
      raises: [RSENotFound],
    },
    async (ctx, { params, body }) => {
      const { source, used, free, files } = body;
      await ok(ctx, services, (metadata) =>
        setRseUsage(services.commands, { rse: params.rse, source, used, free, files }, metadata),
      );
    },
  );
  routes.get(
    '/rses/:rse/usage/history',
    {
      params: rsePath,
      accept: STREAM_ONLY,
      summary: 'The history of an RSE’s usage.',
      query: queryOf({ source: queryText().describe('Only this source.') }),
      raises: [RSENotFound],
    },
    async (ctx, { params, query }) => {
      const document = await activeRse(services, params.rse);
      const { source } = query;
      const history = rseUsageHistory(services.readModels, document.id, source);
      await sendStream(
        ctx,
        mapStream(history, (entry) => ({
          rse_id: entry.rseId,
          rse: entry.rse,
          source: entry.source,
          used: entry.used ?? 0,
          total: (entry.used ?? 0) + (entry.free ?? 0),
          free: entry.free ?? 0,
          updated_at: formatRucioDate(new Date(entry.updatedAt)),
        })),
      );
    },
  );

  routes.get(
    '/rses/:rse/limits',
    {
      params: rsePath,
      accept: JSON_ONLY,
      summary: 'The named limits of an RSE (MinFreeSpace, ...).',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      sendJson(ctx, (await activeRse(services, params.rse)).limits);
    },
  );
  routes.put(
    '/rses/:rse/limits',
    {
      params: rsePath,
      summary: 'Sets a named limit of an RSE.',
      body: jsonObjectBodyOf(LIMIT, { description: '`name`, `value`.' }),
      raises: [RSENotFound],
    },
    async (ctx, { params, body }) => {
      const { name, value } = body;
      await ok(ctx, services, (metadata) => setRseLimit(services.commands, { rse: params.rse, name, value }, metadata));
    },
  );
  routes.delete(
    '/rses/:rse/limits',
    {
      params: rsePath,
      summary: 'Removes a named limit of an RSE.',
      body: jsonObjectBodyOf(
        z.looseObject({ name: requiredText() }).transform(({ name }) => name),
        { description: '`name`.' },
      ),
      raises: [RSENotFound],
    },
    async (ctx, { params, body: name }) => {
      await ok(ctx, services, (metadata) => removeRseLimit(services.commands, { rse: params.rse, name }, metadata));
    },
  );

  routes.get(
    '/rses/:rse/qos_policy',
    {
      params: rsePath,
      accept: JSON_ONLY,
      summary: 'The QoS policies of an RSE.',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      sendJson(ctx, (await activeRse(services, params.rse)).qosPolicies);
    },
  );
  routes.post(
    '/rses/:rse/qos_policy/:policy',
    {
      params: pathOf({ rse: pathText(), policy: pathText() }),
      accept: JSON_ONLY,
      summary: 'Adds a QoS policy to an RSE.',
      body: 'none',
      success: { status: 201, type: 'application/json', description: 'The JSON string "Created".' },
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      await created(ctx, services, (metadata) => addRseQosPolicy(services.commands, params, metadata));
    },
  );
  routes.delete(
    '/rses/:rse/qos_policy/:policy',
    {
      params: pathOf({ rse: pathText(), policy: pathText() }),
      accept: JSON_ONLY,
      summary: 'Removes a QoS policy from an RSE.',
      success: { status: 200, type: 'text/html; charset=utf-8', description: 'Done: an empty body.' },
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) => removeRseQosPolicy(services.commands, params, metadata));
    },
  );
};
