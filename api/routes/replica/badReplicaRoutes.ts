import { z } from 'zod';
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
import { didRefIn, listIn } from '../did/didParams.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import {
  jsonObjectBodyOf,
  jsonQueryOf,
  jsonQueryValue,
  jsonQueryValueOf,
  optionalBoolean,
  orNull,
  rucioBoolean,
} from '../../params.ts';
import { convertedBy, missingAs, refusedAs, type Refusal } from '../../routeInput.ts';
import { integerParameter, parseUtc, rseNameIn } from './replicaParams.ts';
import { replicaPfnsOf } from './replicaPfnLookup.ts';
import { created, type RouteTable, runCommand } from '../../route.ts';
import { activeRse } from '../rse/rseViews.ts';
import type { Services } from '../../services.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';

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
    // The names are the enum in the document (the console offers them from there); Rucio's
    // letters are taken too.
    state: converted(badStateOf)
      .describe('A BadFilesStatus name, or its letter.')
      .meta({ enum: [...new Set(Object.values(BAD_STATE_LETTERS))] }),
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
const declaredReplica = () =>
  refusedAs(
    z.union([
      z.string(),
      z
        .looseObject({ scope: z.string(), name: z.string(), rse_id: z.string() })
        .transform(({ scope, name, rse_id: rseId }): DeclaredReplica => ({ scope, name, rseId })),
      z
        .looseObject({ scope: z.string(), name: z.string(), rse: z.string() })
        .transform(({ scope, name, rse }): DeclaredReplica => ({ scope, name, rse })),
    ]),
    () => new InvalidType('The replica dictionary must include scope and either rse (name) or rse_id'),
  );

/** Declared replicas (checked as Rucio's `replicas` schema, of any length); absent or null is none. */
const declaredReplicas = () =>
  listIn('replicas', declaredReplica(), Number.POSITIVE_INFINITY)
    .nullish()
    .transform((replicas) => replicas ?? []);

/** PFNs (text, of any number); absent or null is none. */
const pfnList = () =>
  listIn(
    'pfns',
    refusedAs(z.string(), ({ input }) => new ValueError(`PFNs must be strings, not ${JSON.stringify(input)}`)),
    Number.POSITIVE_INFINITY,
  )
    .nullish()
    .transform((pfns) => pfns ?? []);

/** Optional text (a reason): anything but text or null is ValueError. */
const reasonText = () =>
  orNull(refusedAs(z.string(), ({ key }) => new ValueError(`'${String(key)}' must be a string`)));

/** `expires_at`, when given (a false value is not): a UTC time with its fraction of a second. */
const expiresAt = () =>
  z.preprocess(
    (value) => value || undefined,
    convertedBy(z.unknown(), (value) => parseUtc(value, 'fraction', 'expires_at')).optional(),
  );

const BAD_PFN_STATES: readonly BadPfnState[] = ['BAD', 'SUSPICIOUS', 'TEMPORARY_UNAVAILABLE'];

const notPfnState = ({ input }: Refusal) =>
  new ValueError(`'${String(input)}' is not a state PFNs can be declared in (${BAD_PFN_STATES.join(', ')})`);

const SUSPICIOUS_DECLARATION = z.looseObject({ pfns: declaredReplicas(), reason: reasonText() });

const BAD_PFNS = z.looseObject({
  state: missingAs(refusedAs(z.enum(BAD_PFN_STATES), notPfnState), notPfnState),
  pfns: pfnList(),
  reason: reasonText(),
  expires_at: expiresAt(),
});

const BAD_DIDS = z.looseObject({
  // Checked first, and then not used, as Rucio's view reads it.
  expires_at: expiresAt(),
  dids: listIn('dids', didRefIn('dids'))
    .nullish()
    .transform((dids) => dids ?? []),
  rse: rseNameIn(),
  reason: reasonText(),
});

/** `pfns` is read only when `replicas` names none. */
const BAD_REPLICAS_GIVEN = z.looseObject({
  replicas: declaredReplicas(),
  pfns: declaredReplicas(),
  reason: reasonText(),
  force: optionalBoolean(false),
});
const BAD_REPLICAS = z
  .preprocess(
    (body) =>
      isRecord(body) && Array.isArray(body.replicas) && body.replicas.length > 0 ? { ...body, pfns: undefined } : body,
    BAD_REPLICAS_GIVEN,
  )
  .transform(({ replicas, pfns, reason, force }) => ({
    replicas: replicas.length > 0 ? replicas : pfns,
    reason,
    force,
  }));

const PFNS_ON_RSE = z.looseObject({ rse: rseNameIn(), pfns: pfnList() });

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
        body: jsonObjectBodyOf(SUSPICIOUS_DECLARATION, {
          description: '`pfns`: PFNs or `{scope, name, rse or rse_id}`; `reason`.',
        }),
        success: NOT_DECLARED,
      },
      async (ctx, { body }) => {
        const declaration = {
          replicas: body.pfns,
          reason: body.reason,
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
        body: jsonObjectBodyOf(BAD_PFNS, { description: '`pfns`, `state`, `reason`, `expires_at`.' }),
      },
      async (ctx, { body }) => {
        const { pfns, state, reason, expires_at: expiresAt } = body;
        await created(ctx, services, (metadata) =>
          declareBadPfns(services.commands, { pfns, state, reason, expiresAt }, metadata),
        );
      },
    );
  }
  for (const path of ['/replicas/bad/dids', '/replicas/bad/dids/']) {
    routes.post(
      path,
      {
        summary: 'Declares replicas of DIDs on an RSE bad.',
        body: jsonObjectBodyOf(BAD_DIDS, {
          description: '`dids`: `{scope, name}` each; `rse`, `reason`, `expires_at`.',
        }),
        success: NOT_DECLARED,
      },
      async (ctx, { body }) => {
        const declaration = { dids: body.dids, rse: body.rse, reason: body.reason };
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
        body: jsonObjectBodyOf(BAD_REPLICAS, {
          documentedBy: BAD_REPLICAS_GIVEN,
          description: '`replicas` (or `pfns`): PFNs or `{scope, name, rse or rse_id}`; `reason`, `force`.',
        }),
        success: NOT_DECLARED,
      },
      async (ctx, { body }) => {
        const declaration = { ...body, declaration: 'BAD' as const };
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
        body: jsonObjectBodyOf(PFNS_ON_RSE, { description: '`rse`, `pfns`.' }),
      },
      async (ctx, { body }) => {
        const rse = await activeRse(services, body.rse);
        const { pfns } = body;
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
