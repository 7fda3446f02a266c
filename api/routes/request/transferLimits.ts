import { loadCaller } from '../../../commands/caller.ts';
import { deleteTransferLimit, setTransferLimit } from '../../../commands/request/transferLimitCommands.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import type { TransferLimitDirection, TransferLimitStrategy } from '../../../domain/request/transferLimit.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { AccessDenied, InvalidObject } from '../../../domain/shared/errors.ts';
import { listTransferLimits } from '../../../projections/request/requestQueries.ts';
import type { TransferLimitDocument } from '../../../projections/request/transferLimitsProjection.ts';
import { mapStream, sendOk, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBodyReadBy, requiredKey } from '../../params.ts';
import { runCommand, type RouteOptions, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/** Rucio's TransferLimitDirection: the client sends the value (`D`, `S`); names are taken too. */
const directionOf = (value: unknown): TransferLimitDirection => {
  if (value === undefined || value === null || value === 'D' || value === 'DESTINATION') return 'DESTINATION';
  if (value === 'S' || value === 'SOURCE') return 'SOURCE';
  throw new InvalidObject(`Problem validating direction: ${JSON.stringify(value)} is not one of ['S', 'D']`);
};

/** An optional whole number ≥ 0 (counts, bytes, hours); null and absent mean "not given". */
const countOf = (body: Readonly<Record<string, unknown>>, key: string): number | null => {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new InvalidObject(`Problem validating ${key}: ${JSON.stringify(value)} is not a whole number of 0 or more`);
};

const strategyOf = (value: unknown): TransferLimitStrategy | null => {
  if (value === undefined || value === null) return null;
  if (value === 'fifo' || value === 'grouped_fifo') return value;
  throw new InvalidObject(
    `Problem validating strategy: ${JSON.stringify(value)} is not one of ['fifo', 'grouped_fifo']`,
  );
};

const textOf = (value: unknown, key: string): string => {
  if (typeof value === 'string' && value !== '') return value;
  throw new InvalidObject(`Problem validating ${key}: ${JSON.stringify(value)} is not a non-empty string`);
};

const activityOf = (value: unknown): string | null =>
  value === undefined || value === null ? null : textOf(value, 'activity');

/** A limit as `list_transfer_limits` renders it (the direction by name, dates in Rucio's format). */
const limitJson = (limit: TransferLimitDocument) => ({
  id: limit.id,
  rse_expression: limit.rse_expression,
  activity: limit.activity,
  direction: limit.direction,
  max_transfers: limit.max_transfers,
  volume: limit.volume,
  deadline: limit.deadline,
  strategy: limit.strategy,
  transfers: limit.transfers,
  waitings: limit.waitings,
  created_at: rucioDateOrNull(limit.created_at),
  updated_at: rucioDateOrNull(limit.updated_at),
});

/** PUT's body, read in Rucio's order: `rse_expression` and `max_transfers` must be there. */
const limitOf = (body: Readonly<Record<string, unknown>>) => {
  const rseExpression = textOf(requiredKey(body, 'rse_expression'), 'rse_expression');
  requiredKey(body, 'max_transfers');
  return {
    rseExpression,
    activity: activityOf(body.activity),
    direction: directionOf(body.direction),
    maxTransfers: countOf(body, 'max_transfers'),
    volume: countOf(body, 'volume'),
    deadline: countOf(body, 'deadline'),
    strategy: strategyOf(body.strategy),
    transfers: countOf(body, 'transfers'),
    waitings: countOf(body, 'waitings'),
  };
};

/** DELETE's body: the limit's key. */
const selectorOf = (body: Readonly<Record<string, unknown>>) => ({
  rseExpression: textOf(requiredKey(body, 'rse_expression'), 'rse_expression'),
  activity: activityOf(body.activity),
  direction: directionOf(body.direction),
});

const SET_LIMIT = {
  summary: 'Sets the transfer limit of an RSE expression, activity and direction (admins).',
  body: jsonObjectBodyReadBy(limitOf, {
    description:
      '`rse_expression`, `max_transfers`, and optionally `activity`, `direction` (source, destination), `volume`, `deadline`, `strategy`, `transfers`, `waitings`.',
  }),
  success: { status: 201, type: 'text/html; charset=utf-8', description: 'An empty body.' },
  raises: [InvalidObject],
} satisfies RouteOptions;

/** `/requests/transfer_limits`: list (NDJSON), set (PUT, 201 with an empty body) and delete. Admins only. */
export const registerTransferLimitRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/requests/transfer_limits',
    { accept: STREAM_ONLY, summary: 'Every transfer limit (admins).', raises: [AccessDenied] },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(isAdmin(caller), `${caller.account} cannot list transfer limits. `);
      await sendStream(ctx, mapStream(listTransferLimits(services.readModels), limitJson));
    },
  );
  routes.put('/requests/transfer_limits', SET_LIMIT, async (ctx, { body: limit }) => {
    await runCommand(ctx, services, (metadata) => setTransferLimit(services.commands, limit, metadata));
    sendOk(ctx, 201);
  });
  routes.delete(
    '/requests/transfer_limits',
    {
      summary: 'Removes a transfer limit.',
      body: jsonObjectBodyReadBy(selectorOf, { description: '`rse_expression`, `activity`, `direction`.' }),
      raises: [InvalidObject],
    },
    async (ctx, { body: selector }) => {
      await runCommand(ctx, services, (metadata) => deleteTransferLimit(services.commands, selector, metadata));
      sendOk(ctx);
    },
  );
};
