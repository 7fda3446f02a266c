import { resolvePfnOnRse } from '../../../commands/replica/pfnResolution.ts';
import {
  declareBadDids,
  declareBadPfns,
  declareReplicas,
  type BadPfnState,
  type DeclaredReplica,
} from '../../../commands/replica/replicaDeclarations.ts';
import { evaluateRseExpression } from '../../../domain/rse/rseExpression.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { InvalidType, ValueError } from '../../../domain/shared/errors.ts';
import {
  BAD_STATE_LETTERS,
  type BadReplicaDocument,
  type BadReplicaState,
} from '../../../projections/replica/badReplicasProjection.ts';
import {
  badReplicaRows,
  badReplicaSummary,
  suspiciousReplicas,
} from '../../../projections/replica/badReplicaQueries.ts';
import { loadRseFacts } from '../../../projections/rse/rseFacts.ts';
import { asArray, didRefItem } from '../did/didParams.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import {
  booleanKey,
  jsonObjectBody,
  jsonQueryOf,
  jsonQueryValue,
  jsonQueryValueOf,
  requiredKey,
  rucioBoolean,
} from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { integerParameter, optionalText, parseUtc, rseName } from './replicaParams.ts';
import { replicaPfnsOf } from './replicaPfnLookup.ts';
import { created, type RouteTable, runCommand } from '../../route.ts';
import { activeRse } from '../rse/rseViews.ts';
import type { Services } from '../../services.ts';
import { isOneOf, isRecord } from '../../../domain/shared/narrowing.ts';

const badStateOf = (text: string): BadReplicaState => {
  const state = BAD_STATE_LETTERS[text] ?? Object.values(BAD_STATE_LETTERS).find((known) => known === text);
  if (!state) throw new ValueError(`'${text}' is not a valid BadFilesStatus`);
  return state;
};

/** The RSE ids an expression selects; none given means every RSE. */
const rseIdsOf = async (services: Services, expression: string | undefined): Promise<Set<string> | undefined> =>
  expression
    ? new Set(evaluateRseExpression(expression, await loadRseFacts(services.readModels)).map((rse) => rse.id))
    : undefined;

const badRowJson = (row: BadReplicaDocument) => ({
  scope: row.scope,
  name: row.name,
  rse: row.rse,
  rse_id: row.rse_id,
  state: row.state,
  created_at: formatRucioDate(new Date(row.created_at)),
  updated_at: formatRucioDate(new Date(row.updated_at)),
});

/** A value of a listing's query, converted by `convert` (which throws Rucio's error) when given. */
const converted = <T>(convert: (text: string) => T) =>
  convertedBy(jsonQueryValue(), (text) => (text === undefined ? undefined : convert(text)));

/**
 * The listings: GET /replicas/suspicious, /replicas/bad/states, /replicas/bad/summary. Rucio's
 * clients send their query as URL-encoded JSON (`jsonQueryOf`); an ordinary query works too.
 */
const BAD_STATES = {
  accept: STREAM_ONLY,
  summary: 'Bad, suspicious and recovered replica declarations, filtered by the query.',
  query: jsonQueryOf({
    state: converted(badStateOf).describe('BAD, SUSPICIOUS, RECOVERED, ... (or its letter).'),
    rse: jsonQueryValue().describe('An RSE name.'),
    younger_than: converted((text) => parseUtc(text, 'fraction', 'younger_than')).describe('A UTC time.'),
    older_than: converted((text) => parseUtc(text, 'fraction', 'older_than')).describe('A UTC time.'),
    limit: converted((text) => integerParameter(text, 'limit')).describe('At most this many.'),
    list_pfns: jsonQueryValueOf(rucioBoolean().optional()).describe('True: the PFNs of the replicas instead.'),
  }),
};
const BAD_SUMMARY = {
  accept: STREAM_ONLY,
  summary: 'Declarations counted per RSE, day and reason.',
  query: jsonQueryOf({
    rse_expression: jsonQueryValue().describe('Only these RSEs.'),
    from_date: converted((text) => parseUtc(text, 'day', 'from_date')).describe('The first day (UTC).'),
    to_date: converted((text) => parseUtc(text, 'day', 'to_date')).describe('The last day (UTC).'),
  }),
};
const SUSPICIOUS = {
  accept: JSON_ONLY,
  summary: 'Replicas declared suspicious at least `nattempts` times since `younger_than` (default: ten days ago).',
  query: jsonQueryOf({
    rse_expression: jsonQueryValue().describe('Only these RSEs.'),
    younger_than: converted((text) => parseUtc(text, 'seconds', 'younger_than')).describe('A UTC time.'),
    nattempts: converted((text) => integerParameter(text, 'nattempts')).describe('The least number of declarations.'),
  }),
};
/** The declarations answer the replicas they could not declare, with the reason. */
const NOT_DECLARED = {
  status: 201,
  type: 'application/json',
  description: 'The replicas not declared, by RSE, with the reason.',
};

export const registerBadReplicaListRoutes = (routes: RouteTable, services: Services): void => {
  for (const path of ['/replicas/bad/states', '/replicas/bad/states/']) {
    routes.get(path, BAD_STATES, async (ctx, { query }) => {
      const { state, rse, younger_than: youngerThan, older_than: olderThan, limit } = query;
      const rows = badReplicaRows(services.readModels, {
        ...(state ? { state } : {}),
        ...(rse ? { rseId: (await activeRse(services, rse)).id } : {}),
        ...(youngerThan ? { youngerThan: youngerThan.toISOString() } : {}),
        ...(olderThan ? { olderThan: olderThan.toISOString() } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      if (query.list_pfns === true) {
        await sendStream(ctx, replicaPfnsOf(services.readModels, rows, rse));
        return;
      }
      await sendStream(ctx, mapStream(rows, badRowJson));
    });
  }
  for (const path of ['/replicas/bad/summary', '/replicas/bad/summary/']) {
    routes.get(path, BAD_SUMMARY, async (ctx, { query }) => {
      const { from_date: fromDate, to_date: toDate } = query;
      const summary = await badReplicaSummary(services.readModels, {
        ...(await rseIdsOptions(services, query.rse_expression)),
        ...(fromDate ? { fromDate: fromDate.toISOString() } : {}),
        ...(toDate ? { toDate: toDate.toISOString() } : {}),
      });
      const lines = summary.map(({ counts, rseId, rse, day, reason }) => ({
        ...counts,
        rse_id: rseId,
        rse,
        created_at: formatRucioDate(new Date(`${day}T00:00:00Z`)),
        reason,
      }));
      await sendStream(ctx, fromArray(lines));
    });
  }
  for (const path of ['/replicas/suspicious', '/replicas/suspicious/']) {
    routes.get(path, SUSPICIOUS, async (ctx, { query }) => {
      const { younger_than: youngerThan, nattempts } = query;
      const found = await suspiciousReplicas(services.readModels, {
        ...(await rseIdsOptions(services, query.rse_expression)),
        // Rucio looks ten days back unless told otherwise.
        youngerThan: (youngerThan ?? new Date(services.clock.now() - 10 * 86_400_000)).toISOString(),
        nattempts: nattempts ?? 0,
      });
      sendJson(
        ctx,
        found.map((replica) => ({
          scope: replica.scope,
          name: replica.name,
          rse: replica.rse,
          rse_id: replica.rseId,
          cnt: replica.count,
          created_at: formatRucioDate(new Date(replica.createdAt)),
        })),
      );
    });
  }
};

const rseIdsOptions = async (services: Services, expression: string | undefined) => {
  const rseIds = await rseIdsOf(services, expression);
  return rseIds ? { rseIds } : {};
};

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** A declared replica: a PFN, or a DID with `rse` or `rse_id` (Rucio's InvalidType otherwise). */
const declaredReplica = (value: unknown): DeclaredReplica => {
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.scope === 'string' && typeof value.name === 'string') {
    const { scope, name, rse, rse_id: rseId } = value;
    if (typeof rseId === 'string') return { scope, name, rseId };
    if (typeof rse === 'string') return { scope, name, rse };
  }
  throw new InvalidType('The replica dictionary must include scope and either rse (name) or rse_id');
};

const declaredReplicas = (value: unknown): DeclaredReplica[] =>
  value === undefined || value === null
    ? []
    : asArray('replicas', value, Number.POSITIVE_INFINITY).map(declaredReplica);

const BAD_PFN_STATES: readonly BadPfnState[] = ['BAD', 'SUSPICIOUS', 'TEMPORARY_UNAVAILABLE'];

/**
 * The declarations (POST /replicas/suspicious, /replicas/bad/pfns, /replicas/bad/dids,
 * /replicas/bad) and POST /replicas/dids, which maps PFNs back to DIDs. All static paths.
 */
export const registerBadReplicaDeclarationRoutes = (routes: RouteTable, services: Services): void => {
  const catalogue = services.commands.replicaCatalogue;
  for (const path of ['/replicas/suspicious', '/replicas/suspicious/']) {
    routes.post(
      path,
      {
        accept: JSON_ONLY,
        summary: 'Declares replicas suspicious.',
        body: jsonObjectBody({}, { description: '`pfns`: PFNs or `{scope, name, rse or rse_id}`; `reason`.' }),
        success: NOT_DECLARED,
      },
      async (ctx, { body: parameters }) => {
        const declaration = {
          replicas: declaredReplicas(parameters.pfns),
          reason: optionalText(parameters.reason, 'reason'),
          force: false,
          declaration: 'SUSPICIOUS' as const,
        };
        const { notDeclared } = await runCommand(ctx, services, (metadata) =>
          declareReplicas(services.commands, declaration, metadata),
        );
        sendJson(ctx, notDeclared, 201);
      },
    );
  }
  for (const path of ['/replicas/bad/pfns', '/replicas/bad/pfns/']) {
    routes.post(
      path,
      {
        summary: 'Declares PFNs BAD, SUSPICIOUS or TEMPORARY_UNAVAILABLE.',
        body: jsonObjectBody({}, { description: '`pfns`, `state`, `reason`, `expires_at`.' }),
      },
      async (ctx, { body: parameters }) => {
        const state = parameters.state;
        if (!isOneOf(BAD_PFN_STATES, state))
          throw new ValueError(
            `'${String(state)}' is not a state PFNs can be declared in (${BAD_PFN_STATES.join(', ')})`,
          );
        const pfns = asArray('pfns', parameters.pfns ?? [], Number.POSITIVE_INFINITY).map((pfn) => {
          if (typeof pfn !== 'string') throw new ValueError(`PFNs must be strings, not ${JSON.stringify(pfn)}`);
          return pfn;
        });
        await created(ctx, services, (metadata) =>
          declareBadPfns(
            services.commands,
            {
              pfns,
              state,
              reason: optionalText(parameters.reason, 'reason'),
              expiresAt: parameters.expires_at ? parseUtc(parameters.expires_at, 'fraction', 'expires_at') : undefined,
            },
            metadata,
          ),
        );
      },
    );
  }
  for (const path of ['/replicas/bad/dids', '/replicas/bad/dids/']) {
    routes.post(
      path,
      {
        summary: 'Declares replicas of DIDs on an RSE bad.',
        body: jsonObjectBody({}, { description: '`dids`: `{scope, name}` each; `rse`, `reason`, `expires_at`.' }),
        success: NOT_DECLARED,
      },
      async (ctx, { body: parameters }) => {
        if (parameters.expires_at) parseUtc(parameters.expires_at, 'fraction', 'expires_at');
        const dids = asArray('dids', parameters.dids ?? []).map((item) => didRefItem('dids', item));
        const declaration = { dids, rse: rseName(parameters.rse), reason: optionalText(parameters.reason, 'reason') };
        const { notDeclared } = await runCommand(ctx, services, (metadata) =>
          declareBadDids(services.commands, declaration, metadata),
        );
        sendJson(ctx, notDeclared, 201);
      },
    );
  }
  for (const path of ['/replicas/bad', '/replicas/bad/']) {
    routes.post(
      path,
      {
        accept: JSON_ONLY,
        summary: 'Declares replicas bad.',
        body: jsonObjectBody(
          {},
          { description: '`replicas` (or `pfns`): PFNs or `{scope, name, rse or rse_id}`; `reason`, `force`.' },
        ),
        success: NOT_DECLARED,
      },
      async (ctx, { body: parameters }) => {
        const given = declaredReplicas(parameters.replicas);
        const declaration = {
          replicas: given.length > 0 ? given : declaredReplicas(parameters.pfns),
          reason: optionalText(parameters.reason, 'reason'),
          force: booleanKey(parameters, 'force', false),
          declaration: 'BAD' as const,
        };
        const { notDeclared } = await runCommand(ctx, services, (metadata) =>
          declareReplicas(services.commands, declaration, metadata),
        );
        sendJson(ctx, notDeclared, 201);
      },
    );
  }
  for (const path of ['/replicas/dids', '/replicas/dids/']) {
    routes.post(
      path,
      {
        accept: STREAM_ONLY,
        summary: 'The DIDs PFNs on an RSE stand for, one line per PFN.',
        body: jsonObjectBody({}, { description: '`rse`, `pfns`.' }),
      },
      async (ctx, { body: parameters }) => {
        const rse = await activeRse(services, rseName(requiredKey(parameters, 'rse')));
        const pfns = asArray('pfns', parameters.pfns ?? [], Number.POSITIVE_INFINITY).map((pfn) => {
          if (typeof pfn !== 'string') throw new ValueError(`PFNs must be strings, not ${JSON.stringify(pfn)}`);
          return pfn;
        });
        const target = (await catalogue.rseById(rse.id))!;
        async function* lines() {
          for (const pfn of pfns) {
            const did = await resolvePfnOnRse(catalogue, target, pfn, { guess: true });
            if (did) yield { [pfn]: { scope: did.scope, name: did.name } };
          }
        }
        await sendStream(ctx, lines());
      },
    );
  }
};
