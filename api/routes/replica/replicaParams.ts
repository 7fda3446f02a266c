import { z } from 'zod';
import { convertedBy, missingAs, refusedAs, type Refusal } from '../../routeInput.ts';
import { requiredValue } from '../../params.ts';
import type { DidRef } from '../../../domain/did/did.ts';
import { replicaStateNamed, type ReplicaState } from '../../../domain/replica/replica.ts';
import type { ReplicaFile } from '../../../domain/replica/replicaRegistration.ts';
import { InvalidObject, ValueError, type RucioError } from '../../../domain/shared/errors.ts';
import { isValidName } from '../../../domain/shared/names.ts';
import { didRefShape, invalidIn, listIn, objectIn, requiredIn } from '../did/didParams.ts';

/**
 * Replica request bodies read as Rucio's `dids` / `r_dids` schemas read them
 * (lib/rucio/common/schema/generic.py): at most 1000 items, only the schema's keys.
 */

// A declaration, so that the compiler narrows what follows a call (an arrow function's `never` does not).
function problem(schema: string, detail: string): never {
  throw new InvalidObject(`Problem validating ${schema}: ${detail}`);
}

/** The keys a `did` item of the schema may carry. */
const DID_ITEM_KEYS = ['scope', 'name', 'type', 'meta', 'rules', 'bytes', 'adler32', 'md5', 'state', 'pfn'] as const;

const CHECKSUMS = { adler32: /^[a-fA-F\d]{8}$/, md5: /^[a-fA-F\d]{32}$/ } as const;

/** A `did` item's keys, checked before its values: only the schema's (every other one named). */
const didItemKeys = (schema: string) =>
  refusedAs(
    z.strictObject(Object.fromEntries(DID_ITEM_KEYS.map((key) => [key, z.unknown().optional()]))),
    invalidIn(schema, ({ issue, input }) =>
      issue.code === 'unrecognized_keys'
        ? `Additional properties are not allowed (${issue.keys.map((key) => `'${key}'`).join(', ')} unexpected)`
        : `${JSON.stringify(input)} is not of type 'object'`,
    ),
  );

const checksum = (schema: string, pattern: RegExp) =>
  refusedAs(
    z.string().regex(pattern),
    invalidIn(schema, ({ input }) => `${JSON.stringify(input)} does not match '${pattern.source}'`),
  ).optional();

/** A `did` item's values: names and checksums checked, `type` FILE if given. */
const didItemShape = (schema: string) => ({
  ...didRefShape(schema),
  type: refusedAs(
    z.enum(['FILE', 'F']),
    invalidIn(schema, ({ input }) => `${JSON.stringify(input)} is not a file type`),
  ).optional(),
  adler32: checksum(schema, CHECKSUMS.adler32),
  md5: checksum(schema, CHECKSUMS.md5),
});

const replicaState = (schema: string) =>
  convertedBy(requiredValue(), (value): ReplicaState => {
    const state = typeof value === 'string' ? replicaStateNamed(value) : undefined;
    if (!state) return problem(schema, `${JSON.stringify(value)} is not a replica state`);
    return state;
  });

/**
 * The files of `add_replicas` (and of attach / `add_did` with an RSE): `bytes` is required for a
 * replica (Rucio fails on it later with a bare KeyError), `pfn` must be text, `meta` an object.
 */
export const replicaFilesIn = (schema: string) =>
  listIn(
    schema,
    didItemKeys(schema).pipe(
      z
        .looseObject({
          ...didItemShape(schema),
          bytes: requiredIn(
            schema,
            refusedAs(
              z.number().refine(Number.isSafeInteger).min(0),
              invalidIn(schema, ({ input }) => `${JSON.stringify(input)} is not a number of bytes`),
            ),
          ),
          pfn: refusedAs(
            z.string(),
            invalidIn(schema, ({ input }) => `${JSON.stringify(input)} is not of type 'string'`),
          ).optional(),
          meta: objectIn(schema, {}).nullish(),
          state: replicaState(schema).optional(),
        })
        .transform((item): ReplicaFile => ({
          scope: item.scope,
          name: item.name,
          bytes: item.bytes,
          adler32: item.adler32 ?? null,
          md5: item.md5 ?? null,
          ...(item.meta ? { meta: item.meta } : {}),
          ...(item.pfn !== undefined ? { pfn: item.pfn } : {}),
          ...(item.state !== undefined ? { state: item.state } : {}),
        })),
    ),
  );

/** The files of `update_replicas_states`: each needs its new state (names or Rucio's letters). */
export const REPLICA_STATE_CHANGES = listIn(
  'dids',
  didItemKeys('dids').pipe(
    z
      .looseObject({ ...didItemShape('dids'), state: replicaState('dids') })
      .transform(({ scope, name, state }): DidRef & { state: ReplicaState } => ({ scope, name, state })),
  ),
);

/**
 * `rse` on attach and on `add_did(s)` with content: the children (`dids`) are files whose replicas
 * are registered on that RSE first. Rucio reads them as `add_replicas` files only when `rse` is
 * given, and after every key `body` checks: a preprocess step pairs the body with them. `account`
 * (the request's owner, when given) owns the files created. Keys `body` does not read are kept.
 */
export const withReplicasOn = <
  B extends Readonly<{ rse?: string | null | undefined; account?: string | null | undefined }>,
>(
  schema: string,
  body: z.ZodType<B>,
) =>
  z
    .preprocess(
      (value: Readonly<Record<string, unknown>>) => ({
        body: value,
        files: value.rse === undefined || value.rse === null ? undefined : (value.dids ?? []),
      }),
      z.object({ body, files: replicaFilesIn(schema).optional() }),
    )
    .transform(({ body, files }): B & { replicas?: { rse: string; files: ReplicaFile[] } } => {
      const { rse, account } = body;
      if (rse === undefined || rse === null || files === undefined) return body;
      const owned = account === undefined || account === null ? files : files.map((file) => ({ ...file, account }));
      return { ...body, replicas: { rse, files: owned } };
    });

/**
 * DIDs to read (`r_dids`: any scope and name with a word character, at most 1000), each problem
 * answered by `answer` with the schema's detail: the list is judged before its items.
 */
export const readDidsIn = (answer: (detail: string) => RucioError = (detail) => new InvalidObject(detail)) => {
  const problem = (detail: (refusal: Refusal) => string) => (refusal: Refusal) =>
    answer(`Problem validating r_dids: ${detail(refusal)}`);
  const part = missingAs(
    refusedAs(
      z.string().regex(/\w/),
      problem(({ input }) => `${JSON.stringify(input)} does not match '\\w'`),
    ),
    problem(({ key }) => `'${String(key)}' is a required property`),
  );
  return refusedAs(
    z.array(z.unknown()).max(1000),
    problem(({ issue, input }) =>
      issue.code === 'too_big' && Array.isArray(input)
        ? `the array has ${input.length} items, more than 1000`
        : `${JSON.stringify(input)} is not of type 'array'`,
    ),
  ).pipe(
    z.array(
      refusedAs(
        z.looseObject({ scope: part, name: part }),
        problem(({ input }) => `${JSON.stringify(input)} is not of type 'object'`),
      ).transform(({ scope, name }): DidRef => ({ scope, name })),
    ),
  );
};

/** An RSE name as the `rse` schema wants it (a missing one is KeyError, as `param_get` answers). */
export const rseNameIn = () =>
  refusedAs(
    z.string().refine((value) => isValidName('rse', value)),
    ({ input }) =>
      new InvalidObject(
        `Problem validating rse: ${JSON.stringify(input)} does not match '^([A-Z0-9]+([_-][A-Z0-9]+)*)$'`,
      ),
  );

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/**
 * A UTC time in one of the strptime formats Rucio's replica views use: `%Y-%m-%dT%H:%M:%S`,
 * with `.%f` when `fraction` is required, or `%Y-%m-%d` for `day`. Anything else is a ValueError
 * (Rucio lets strptime's error through as a 500).
 */
export const parseUtc = (text: unknown, format: 'seconds' | 'fraction' | 'day', name: string): Date => {
  const fail = (): never => {
    throw new ValueError(`time data ${JSON.stringify(text)} of '${name}' does not match format '${FORMATS[format]}'`);
  };
  if (typeof text !== 'string') return fail();
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const full = DATE_TIME.exec(text);
  const parts = format === 'day' ? (day ? [...day.slice(1), '0', '0', '0', undefined] : undefined) : full?.slice(1);
  if (!parts || (format === 'fraction' && parts[6] === undefined) || (format === 'seconds' && parts[6] !== undefined))
    return fail();
  const [year, month, date, hours, minutes, seconds, fraction] = parts;
  const value = new Date(
    Date.UTC(
      Number(year),
      Number(month) - 1,
      Number(date),
      Number(hours),
      Number(minutes),
      Number(seconds),
      fraction ? Number(fraction.padEnd(6, '0').slice(0, 3)) : 0,
    ),
  );
  if (
    value.getUTCDate() !== Number(date) ||
    value.getUTCMonth() !== Number(month) - 1 ||
    value.getUTCHours() !== Number(hours)
  )
    fail();
  return value;
};

const FORMATS = { seconds: '%Y-%m-%dT%H:%M:%S', fraction: '%Y-%m-%dT%H:%M:%S.%f', day: '%Y-%m-%d' } as const;

/** An integer parameter, as Python's int() reads text; anything else is a ValueError. */
export const integerParameter = (value: unknown, name: string): number => {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)
        ? Number(value)
        : Number.NaN;
  if (!Number.isSafeInteger(number))
    throw new ValueError(`invalid literal for int() with base 10: '${String(value)}' (${name})`);
  return number;
};
