import { z } from 'zod';
import { addRules } from '../../../commands/rule/ruleCreationCommands.ts';
import { requestRuleDeletion } from '../../../commands/rule/ruleDeletion.ts';
import { moveRule, reduceRule } from '../../../commands/rule/ruleReplacement.ts';
import { approveRule, updateRule } from '../../../commands/rule/ruleUpdates.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import {
  AccessDenied,
  DataIdentifierNotFound,
  InvalidValueForKey,
  RucioError,
  TypeError_,
} from '../../../domain/shared/errors.ts';
import { InsufficientAccountLimit, InsufficientTargetRSEs, RuleNotFound } from '../../../domain/rule/ruleErrors.ts';
import {
  availableSources,
  didBytes,
  findRule,
  listRules,
  locksOfRule,
  ruleFilter,
  ruleHistoryOfDid,
  transferAttempts,
} from '../../../projections/rule/ruleQueries.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, sendText, STREAM_ONLY } from '../../http.ts';
import {
  jsonObjectBody,
  jsonObjectBodyOf,
  orNull,
  pathOf,
  pathText,
  queryFilters,
  queryOf,
  queryText,
  rucioBoolean,
} from '../../params.ts';
import { checkedBy, convertedBy, parsed, refusedAs } from '../../routeInput.ts';
import { ok, type RouteOptions, type RouteTable, runCommand } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { scopeNamePath } from '../did/didParams.ts';
import { addRuleSchema, MOVE_OVERRIDE, RULE_OPTIONS, RULE_REQUEST, updateRuleSchema } from './ruleParams.ts';
import { didRuleHistoryJson, replicaLockJson, ruleJson } from './ruleRendering.ts';

/**
 * Rucio's `/rules` statuses: the creation route answers 409 for the rule errors and
 * InvalidRSEExpression; deletion answers 401 for UnsupportedOperation (a locked rule); updates 409
 * for InputValidationError.
 */
const CREATION_ERRORS = {
  InvalidObject: 409,
  InvalidRSEExpression: 409,
  InvalidValueForKey: 409,
  InvalidSourceReplicaExpression: 409,
  RSEWriteBlocked: 409,
  RSEOverQuota: 409,
};
/** Reducing and moving create a rule too: the creation errors Rucio leaves unmapped (500) are 409 there as well. */
const REPLACEMENT_ERRORS = {
  RuleReplaceFailed: 409,
  InvalidSourceReplicaExpression: 409,
  RSEWriteBlocked: 409,
  RSEOverQuota: 409,
};

/** The answer of the routes that create rules. */
const RULE_IDS = {
  status: 201,
  type: 'text/html; charset=utf-8',
  description: 'The new rule ids as a JSON list (typed text/html, as Rucio answers).',
};
const ADD_RULE = {
  errors: CREATION_ERRORS,
  summary: 'Creates replication rules: one per DID.',
  body: jsonObjectBodyOf(z.looseObject({}).pipe(RULE_REQUEST), { documentedBy: addRuleSchema }),
  success: RULE_IDS,
  raises: [DataIdentifierNotFound, InsufficientAccountLimit, InsufficientTargetRSEs, AccessDenied],
} satisfies RouteOptions;
const LIST_RULES = {
  accept: STREAM_ONLY,
  summary:
    'Rules, filtered by the columns given in the query (also `id`, `did_type`, `copies`, `locked`, `grouping`, `priority`, ...).',
  // Every parameter is a filter, as Rucio's list view passes them on; these are documented.
  query: queryOf({
    scope: queryText().describe('The DID’s scope; `*` is a wildcard.'),
    name: queryText().describe('The DID’s name; `*` is a wildcard.'),
    account: queryText().describe('The owner; `*` is a wildcard.'),
    state: queryText().describe('A state or its letter: OK, REPLICATING, STUCK, SUSPENDED, ...'),
    rse_expression: queryText().describe('The expression, as written.'),
    activity: queryText().describe('The activity.'),
    created_before: queryText().describe('A date.'),
    created_after: queryText().describe('A date.'),
    updated_before: queryText().describe('A date.'),
    updated_after: queryText().describe('A date.'),
  }).pipe(queryFilters()),
  raises: [InvalidValueForKey],
} satisfies RouteOptions;

const UPDATE_RULE = {
  params: pathOf({ rule_id: pathText() }),
  errors: { InputValidationError: 409, UnsupportedOperation: 409, DuplicateRule: 409 },
  summary:
    'Changes the options of a rule (`locked`, `lifetime`, `comment`, ...), or approves or denies it (`approve`).',
  body: jsonObjectBodyOf(RULE_OPTIONS, { documentedBy: updateRuleSchema }),
  raises: [RuleNotFound, AccessDenied],
} satisfies RouteOptions;

/** `POST /rules/{id}/reduce`: `copies` (required, whole), `exclude_expression`. */
const REDUCTION = z
  .looseObject({
    copies: refusedAs(
      z.number().refine(Number.isInteger),
      ({ input }) => new TypeError_(`'copies' must be an integer, not ${JSON.stringify(input)}`),
    ),
    exclude_expression: orNull(refusedAs(z.string(), () => new TypeError_(`'exclude_expression' must be a string`))),
  })
  .transform(({ copies, exclude_expression }) => ({ copies, excludeExpression: exclude_expression }));

/**
 * `POST /rules/{id}/move`: `rse_expression` (required), the new rule's `override` options, with
 * `activity` and `source_replica_expression` given beside them; a `rule_id` in the body wins
 * over the path's.
 */
const MOVE_VALUES = z.looseObject({
  rse_expression: refusedAs(z.string(), () => new TypeError_(`'rse_expression' must be a string`)),
  override: z.unknown().optional(),
  activity: z.unknown().optional(),
  source_replica_expression: z.unknown().optional(),
  rule_id: z.unknown().optional(),
});
const MOVE = MOVE_VALUES.transform((body) => {
  const override: Record<string, unknown> =
    typeof body.override === 'object' && body.override !== null ? { ...body.override } : {};
  for (const key of ['activity', 'source_replica_expression'] as const)
    if (body[key] !== undefined) override[key] = body[key];
  return {
    ...(typeof body.rule_id === 'string' ? { ruleId: body.rule_id } : {}),
    rseExpression: body.rse_expression,
    override,
  };
}).pipe(
  z.looseObject({
    ruleId: z.string().optional(),
    rseExpression: z.string(),
    // Read apart, so that its problems are named by their path inside the override, as Rucio names them.
    override: convertedBy(z.record(z.string(), z.unknown()), (override) => parsed(MOVE_OVERRIDE, override)),
  }),
);

/** New rule ids: a JSON list under the text content type, as Rucio answers. */
const sendRuleIds = (ctx: AppContext, ruleIds: readonly string[], status = 201) =>
  sendText(ctx, JSON.stringify(ruleIds), status);

const ruleOrNotFound = async (services: Services, ruleId: string) => {
  const rule = await findRule(services.readModels, ruleId);
  if (!rule) throw new RuleNotFound(`No rule with the id ${ruleId} found`);
  return rule;
};

/** Rule lines with the DID's bytes (`list_rules`). */
export const ruleLines = (services: Services, rules: AsyncIterable<Parameters<typeof ruleJson>[0]>) =>
  (async function* () {
    for await (const rule of rules) yield ruleJson(rule, await didBytes(services.readModels, rule.scope, rule.name));
  })();

/**
 * The /rules area. As in Rucio, `<path:scope_name>/history` shadows the intended
 * `<rule_id>/history` (answered 400).
 */
export const registerRuleRoutes = (routes: RouteTable, services: Services): void => {
  routes.post('/rules/', ADD_RULE, async (ctx, { body }) => {
    const request = { ...body, account: body.account ?? ctx.state.issuer! };
    const { ruleIds } = await runCommand(ctx, services, (metadata) => addRules(services.commands, request, metadata));
    sendRuleIds(ctx, ruleIds);
  });
  routes.get('/rules/', LIST_RULES, async (ctx, { query }) => {
    const filter = ruleFilter(query);
    await sendStream(ctx, ruleLines(services, listRules(services.readModels, filter)));
  });

  routes.get(
    '/rules/:rule_id/locks',
    { params: pathOf({ rule_id: pathText() }), accept: STREAM_ONLY, summary: 'The replica locks of a rule.' },
    async (ctx, { params }) => {
      await sendStream(ctx, mapStream(locksOfRule(services.readModels, params.rule_id), replicaLockJson));
    },
  );
  routes.post(
    '/rules/:rule_id/reduce',
    {
      params: pathOf({ rule_id: pathText() }),
      errors: REPLACEMENT_ERRORS,
      summary: 'Replaces a rule by one with fewer copies.',
      body: jsonObjectBodyOf(REDUCTION, { description: '`copies`, `exclude_expression`.' }),
      success: RULE_IDS,
      raises: [RuleNotFound],
    },
    async (ctx, { params, body }) => {
      const reduction = { ruleId: params.rule_id, copies: body.copies, excludeExpression: body.excludeExpression };
      const { ruleIds } = await runCommand(ctx, services, (metadata) =>
        reduceRule(services.commands, reduction, metadata),
      );
      sendRuleIds(ctx, ruleIds);
    },
  );
  routes.post(
    '/rules/:rule_id/move',
    {
      params: pathOf({ rule_id: pathText() }),
      errors: REPLACEMENT_ERRORS,
      summary: 'Replaces a rule by one on other RSEs; the old one goes once the new one is OK.',
      body: jsonObjectBodyOf(MOVE, {
        documentedBy: MOVE_VALUES,
        description: '`rse_expression`, `override` (options of the new rule), `activity`, `source_replica_expression`.',
      }),
      success: RULE_IDS,
      raises: [RuleNotFound],
    },
    async (ctx, { params, body }) => {
      const { ruleId = params.rule_id, rseExpression, override } = body;
      const move = { ruleId, rseExpression, override };
      const { ruleIds } = await runCommand(ctx, services, (metadata) => moveRule(services.commands, move, metadata));
      sendRuleIds(ctx, ruleIds);
    },
  );
  routes.get(
    '/rules/:rule_id/analysis',
    {
      params: pathOf({ rule_id: pathText() }),
      accept: JSON_ONLY,
      summary: 'Why a rule does not progress: its error, and per stuck lock the attempts, last error and sources.',
      raises: [RuleNotFound],
    },
    async (ctx, { params }) => {
      sendJson(ctx, await examineRule(services, params.rule_id));
    },
  );
  routes.get(
    '/rules/*scope_name/history',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The history of the rules on a DID.',
    },
    async (ctx, { params }) => {
      const did = params.scope_name;
      await sendStream(ctx, mapStream(ruleHistoryOfDid(services.readModels, did.scope, did.name), didRuleHistoryJson));
    },
  );

  routes.get(
    '/rules/:rule_id',
    {
      params: pathOf({ rule_id: pathText() }),
      accept: JSON_ONLY,
      summary: 'One rule.',
      // Rucio's view reads a body even on GET, for `estimate_ttc`.
      body: jsonObjectBody(
        {
          estimate_ttc: checkedBy(z.unknown(), (estimate) => {
            if (estimate) throw new RucioError('NotImplemented', 'estimate_ttc is not implemented');
          }).optional(),
        },
        { optional: true, description: '`estimate_ttc` (not implemented).' },
      ),
      raises: [RuleNotFound],
    },
    async (ctx, { params }) => {
      sendJson(ctx, ruleJson(await ruleOrNotFound(services, params.rule_id)));
    },
  );
  routes.put('/rules/:rule_id', UPDATE_RULE, async (ctx, { params, body: options }) => {
    const ruleId = params.rule_id;
    await ok(ctx, services, (metadata) =>
      options.approval
        ? approveRule(services.commands, { ruleId, approve: options.approve, reason: options.reason }, metadata)
        : updateRule(services.commands, { ruleId, update: options.update }, metadata),
    );
  });
  routes.delete(
    '/rules/:rule_id',
    {
      params: pathOf({ rule_id: pathText() }),
      errors: { UnsupportedOperation: 401 },
      summary: 'Deletes a rule (its locks are released).',
      body: jsonObjectBody({ purge_replicas: orNull(rucioBoolean()) }, { description: '`purge_replicas`.' }),
      raises: [RuleNotFound],
    },
    async (ctx, { params, body }) => {
      await ok(ctx, services, (metadata) =>
        requestRuleDeletion(
          services.commands,
          { ruleId: params.rule_id, purgeReplicas: body.purge_replicas },
          metadata,
        ),
      );
    },
  );
};

/**
 * Rucio's `examine_rule`: why a rule does not progress. OK, REPLICATING and SUSPENDED rules are
 * answered with a sentence; for the others, the rule's error and, per STUCK lock, the attempts
 * made so far, the last error and source, and where the file could come from.
 */
const examineRule = async (services: Services, ruleId: string) => {
  const rule = await ruleOrNotFound(services, ruleId);
  const sentences: Readonly<Record<string, string>> = {
    OK: 'This replication rule is OK',
    REPLICATING: 'This replication rule is currently REPLICATING',
    SUSPENDED: 'This replication rule is SUSPENDED',
  };
  const sentence = sentences[rule.state];
  if (sentence) return { rule_error: sentence, transfers: [] };
  const transfers = [];
  for await (const lock of locksOfRule(services.readModels, ruleId)) {
    if (lock.state !== 'STUCK') continue;
    const attempts = await transferAttempts(services.readModels, lock.scope, lock.name, lock.rse_id);
    const last = attempts[attempts.length - 1];
    const sources = await availableSources(services.readModels, lock.scope, lock.name);
    transfers.push({
      scope: lock.scope,
      name: lock.name,
      rse_id: lock.rse_id,
      rse: lock.rse,
      attempts: attempts.length,
      last_error: last ? (last.err_msg ?? last.state) : null,
      last_source: last?.source_rse ?? null,
      sources: sources.map((source) => [source.rse, source.availabilityRead]),
      last_time: last ? rucioDateOrNull(last.updated_at) : null,
    });
  }
  return { rule_error: rule.error, transfers };
};
