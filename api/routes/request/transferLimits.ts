import { z } from 'zod';
import { loadCaller } from '../../../commands/caller.ts';
import { deleteTransferLimit, setTransferLimit } from '../../../commands/request/transferLimitCommands.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import type { TransferLimitDirection } from '../../../domain/request/transferLimit.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { AccessDenied, InvalidObject } from '../../../domain/shared/errors.ts';
import { listTransferLimits } from '../../../projections/request/requestQueries.ts';
import type { TransferLimitDocument } from '../../../projections/request/transferLimitsProjection.ts';
import { mapStream, sendOk, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBodyOf, keysFirst, notA, orNull } from '../../params.ts';
import { refusedAs } from '../../routeInput.ts';
import { runCommand, type RouteOptions, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/** Rucio's TransferLimitDirection: the client sends the value (`D`, `S`); names are taken too; absent is D. */
const direction = () =>
  refusedAs(z.enum(['D', 'DESTINATION', 'S', 'SOURCE']).nullish(), notA("one of ['S', 'D']")).transform(
    (value): TransferLimitDirection => (value === 'S' || value === 'SOURCE' ? 'SOURCE' : 'DESTINATION'),
  );

/** An optional whole number ≥ 0 (counts, bytes, hours); null and absent mean "not given". */
const count = () => orNull(refusedAs(z.number().refine(Number.isInteger).min(0), notA('a whole number of 0 or more')));

const strategy = () => orNull(refusedAs(z.enum(['fifo', 'grouped_fifo']), notA("one of ['fifo', 'grouped_fifo']")));

const text = () => refusedAs(z.string().min(1), notA('a non-empty string'));

/** The key of a limit: the RSE expression (required), the activity and the direction. */
const SELECTOR = {
  rse_expression: text(),
  activity: orNull(text()),
  direction: direction(),
};

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

/**
 * PUT's body, read in Rucio's order: `rse_expression` and `max_transfers` must be there before
 * any other value is looked at.
 */
const LIMIT_VALUES = z.looseObject({
  ...SELECTOR,
  max_transfers: count(),
  volume: count(),
  deadline: count(),
  strategy: strategy(),
  transfers: count(),
  waitings: count(),
});
const LIMIT = keysFirst(['rse_expression', 'max_transfers'], LIMIT_VALUES).transform((limit) => ({
  rseExpression: limit.rse_expression,
  activity: limit.activity,
  direction: limit.direction,
  maxTransfers: limit.max_transfers,
  volume: limit.volume,
  deadline: limit.deadline,
  strategy: limit.strategy,
  transfers: limit.transfers,
  waitings: limit.waitings,
}));

/** DELETE's body: the limit's key. */
const SELECTOR_BODY = z.looseObject(SELECTOR).transform((selector) => ({
  rseExpression: selector.rse_expression,
  activity: selector.activity,
  direction: selector.direction,
}));

const SET_LIMIT = {
  summary: 'Sets the transfer limit of an RSE expression, activity and direction (admins).',
  body: jsonObjectBodyOf(LIMIT, {
    documentedBy: LIMIT_VALUES,
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
      body: jsonObjectBodyOf(SELECTOR_BODY, { description: '`rse_expression`, `activity`, `direction`.' }),
      raises: [InvalidObject],
    },
    async (ctx, { body: selector }) => {
      await runCommand(ctx, services, (metadata) => deleteTransferLimit(services.commands, selector, metadata));
      sendOk(ctx);
    },
  );
};
