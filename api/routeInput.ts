import { z } from 'zod';
import { KeyError, RucioError, TypeError_, ValueError } from '../domain/shared/errors.ts';
import { checkJsonBounds } from './jsonBounds.ts';
import type { AppContext } from './services.ts';

/**
 * What a route reads from a request, declared once as zod schemas (`params`, `query`, `body` in
 * the route's options, api/route.ts): the route table parses the request with them before the
 * handler runs and hands the handler the parsed, typed values; the first problem found is
 * answered as Rucio answers it; the OpenAPI document describes the same schemas
 * (api/openapi/openApiDocument.ts).
 *
 * Rucio's answer for a bad value (class, message, status) is declared on the schema that refuses
 * it: a check made with `checkedBy` raises the domain's own RucioError (a record's keys too);
 * for zod's own refusals (a wrong type, a length or pattern zod checks) the innermost schema on
 * the issue's path that declares one with `refusedAs` answers. A key missing from an object is Rucio's `param_get`
 * KeyError unless a schema on its path declares another answer with `missingAs`.
 */

/**
 * What a schema's refusal becomes: the issue, the value refused (undefined: missing), its key,
 * and what holds it (the object or list around it, as the request gave it: a message may name a
 * sibling).
 */
export type Refusal = Readonly<{
  issue: z.core.$ZodIssue;
  input: unknown;
  key: PropertyKey | undefined;
  within: unknown;
}>;
type Problem = (refusal: Refusal) => RucioError;

/**
 * The answers schemas declare for their own refusals, keyed by the schema's definition: a copy
 * made by `.describe()` or `.meta()` shares it, and so keeps the answer.
 */
const answers = new WeakMap<object, Readonly<{ refused?: Problem; missing?: Problem }>>();

/** `schema`, whose own refusals (a wrong type, bounds zod checks) are answered by `problem`. */
export const refusedAs = <T extends z.ZodType>(schema: T, problem: Problem): T => {
  answers.set(schema._zod.def, { ...answers.get(schema._zod.def), refused: problem });
  return schema;
};

/**
 * `schema`, a key missing from which (or, on a property, that property missing) is answered by
 * `problem` rather than Rucio's KeyError "'<key>' not defined".
 */
export const missingAs = <T extends z.ZodType>(schema: T, problem: Problem): T => {
  answers.set(schema._zod.def, { ...answers.get(schema._zod.def), missing: problem });
  return schema;
};

/**
 * `schema`, whose values are also held to `check`: a domain function that throws the RucioError
 * Rucio answers (`assertValidName`, `checkText`, ...). What it returns is not used.
 */
export const checkedBy = <T extends z.ZodType>(schema: T, check: (value: z.output<T>) => unknown): T =>
  schema.check((payload) => {
    try {
      check(payload.value);
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      payload.issues.push({ code: 'custom', input: payload.value, message: error.message, params: { error } });
    }
  });

/**
 * `schema` (its type, and what the OpenAPI document says of it), whose values `convert` then
 * checks and turns into what the handler gets: a domain function that throws Rucio's error.
 */
export const convertedBy = <T extends z.ZodType, R>(schema: T, convert: (value: z.output<T>) => R) =>
  schema.transform((value, payload): R => {
    try {
      return convert(value);
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      payload.issues.push({ code: 'custom', input: value, message: error.message, params: { error } });
      return z.NEVER;
    }
  });

/** The request body a route reads: JSON (whatever the Content-Type), checked by `schema`. */
export type JsonBody<T = unknown> = Readonly<{
  schema: z.ZodType<T>;
  /** The shape named in the error for a body that is not JSON: "cannot decode json parameter <what>". */
  what: string;
  /** The value an empty body stands for; undefined: an empty body is not JSON. */
  empty?: unknown;
  /** What the OpenAPI document shows instead of `schema`: the stage of a body read in stages that names every key. */
  documentedBy?: z.ZodType;
}>;

/** Koa's query object: a repeated key holds every value. */
export type RawQuery = Readonly<Record<string, string | string[] | undefined>>;

/** The schemas a route declares; path parameters at least whenever its path has variables. */
export type RouteSchemas<P = unknown, Q = unknown, B = unknown> = Readonly<{
  /** The path's variables (Koa's `ctx.params`, already percent-decoded). */
  params?: z.ZodType<P>;
  /** The query string's parameters (`RawQuery`). */
  query?: z.ZodType<Q>;
  /** The JSON body, or `'none'`: the route reads no body (documentation). */
  body?: JsonBody<B> | 'none';
}>;

/** The parsed input a handler gets: each part typed by its schema (empty where none is declared). */
export type RouteInput<P = EmptyInput, Q = EmptyInput, B = undefined> = Readonly<{ params: P; query: Q; body: B }>;

export type EmptyInput = Readonly<Record<never, never>>;

const PARSE = { reportInput: true } as const;

/**
 * Parses what the route declares: the body first (as Rucio's views read it before anything
 * else), then the path, then the query. Throws the RucioError of the first problem.
 */
export const parseRouteInput = <P, Q, B>(ctx: AppContext, schemas: RouteSchemas<P, Q, B>): RouteInput<P, Q, B> => {
  const body =
    schemas.body && schemas.body !== 'none' && 'schema' in schemas.body
      ? parseBody(ctx.state.body, schemas.body)
      : undefined;
  const params = schemas.params ? parsed(schemas.params, ctx.params) : {};
  const query = schemas.query && '_zod' in schemas.query ? parsed(schemas.query, queryOf(ctx)) : {};
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- each part is its schema's output, or empty where the route declares none (and so its handler's input type says empty)
  return { params, query, body } as RouteInput<P, Q, B>;
};

/** The query string each parsed query object came from (for `queryStringOf`). */
const queryStrings = new WeakMap<object, string>();

const queryOf = (ctx: AppContext): RawQuery => {
  const query = ctx.query;
  queryStrings.set(query, ctx.querystring);
  return query;
};

/**
 * The raw query string `query` (what a route's query schema is given) was parsed from: for the
 * listings whose clients send their query as URL-encoded JSON, which the parsed query cannot show.
 */
export const queryStringOf = (query: unknown): string | undefined =>
  query !== null && typeof query === 'object' ? queryStrings.get(query) : undefined;

const parseBody = <B>(text: string | undefined, body: JsonBody<B>): B => {
  const raw = text ?? '';
  if (body.empty !== undefined && raw.trim() === '') return parsed(body.schema, body.empty);
  let value: unknown;
  try {
    value = JSON.parse(raw) as unknown;
  } catch {
    throw new ValueError(`cannot decode json parameter ${body.what}`);
  }
  checkJsonBounds(value);
  return parsed(body.schema, value);
};

/** `value` parsed by `schema`, or the RucioError of its first problem. */
export const parsed = <T>(schema: z.ZodType<T>, value: unknown): T => {
  const result = schema.safeParse(value, PARSE);
  if (result.success) return result.data;
  throw rucioErrorOf(schema, result.error.issues[0]!, value);
};

/**
 * The RucioError of one issue: the domain's error a `checkedBy` check raised, else the answer of
 * the innermost schema on the issue's path that declares one, else (a missing key) KeyError.
 */
export const rucioErrorOf = (root: z.ZodType, issue: z.core.$ZodIssue, value: unknown): RucioError => {
  const raised = raisedBy(issue);
  if (raised) return raised;
  const key = issue.path.at(-1);
  const input = 'input' in issue ? issue.input : undefined;
  const within = issue.path.slice(0, -1).reduce<unknown>((holder, step) => valueAt(holder, step), value);
  const refusal: Refusal = { issue, input, key, within };
  const missing = issue.code === 'invalid_type' && input === undefined && typeof key === 'string';
  const declared = declaredProblem(root, issue.path, missing ? 'missing' : 'refused', value);
  if (declared) return declared(refusal);
  if (missing) return new KeyError(`'${key}' not defined`);
  if (issue.code === 'invalid_type') return new TypeError_(`'${String(key ?? 'body')}' ${issue.message}`);
  return new ValueError(`${issue.path.join('.') || 'input'}: ${issue.message}`);
};

/**
 * The domain's error a `checkedBy` or `convertedBy` check raised: on the issue itself, or (a
 * record's key refused by such a check) on the key's own issue.
 */
const raisedBy = (issue: z.core.$ZodIssue): RucioError | undefined => {
  const raised: unknown =
    issue.code === 'custom'
      ? issue.params?.error
      : issue.code === 'invalid_key'
        ? raisedBy(issue.issues[0]!)
        : undefined;
  return raised instanceof RucioError ? raised : undefined;
};

/**
 * The `problem` of the innermost schema with one along `path` (wrappers such as optional
 * crossed), `value` being what that schema was given. Of a pipe's two stages, the one that
 * refused answers: the earlier one when it refuses `value`, else the later one with what the
 * earlier one made of it (a body read in stages, a conversion, a preprocess step).
 */
const declaredProblem = (
  node: z.core.$ZodType,
  path: readonly PropertyKey[],
  kind: 'missing' | 'refused',
  value: unknown,
): Problem | undefined => {
  const own = answers.get(node._zod.def)?.[kind];
  if (node instanceof z.ZodPipe) {
    const first = z.safeParse(node.in, value);
    const stage = first.success
      ? declaredProblem(node.out, path, kind, first.data)
      : declaredProblem(node.in, path, kind, value);
    return stage ?? own;
  }
  const wrapped = unwrapped(node);
  if (wrapped) return declaredProblem(wrapped, path, kind, value) ?? own;
  const [key, ...rest] = path;
  const next = key === undefined ? undefined : member(node, key);
  return (next && declaredProblem(next, rest, kind, valueAt(value, key!))) ?? own;
};

/** The value of one key of an object, or of one item of an array. */
const valueAt = (value: unknown, key: PropertyKey): unknown => {
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
  const item: unknown = Reflect.get(value, key);
  return item;
};

/** The schema a wrapper (optional, nullable, default, a preprocess, ...) checks with. */
const unwrapped = (node: z.core.$ZodType): z.core.$ZodType | undefined => {
  if (
    node instanceof z.ZodOptional ||
    node instanceof z.ZodNullable ||
    node instanceof z.ZodDefault ||
    node instanceof z.ZodPrefault ||
    node instanceof z.ZodNonOptional ||
    node instanceof z.ZodReadonly ||
    node instanceof z.ZodCatch
  )
    return node._zod.def.innerType;
  if (node instanceof z.ZodLazy) return node._zod.def.getter();
  return undefined;
};

/** The schema of one key of an object or record, or of an item of an array. */
const member = (node: z.core.$ZodType, key: PropertyKey): z.core.$ZodType | undefined => {
  if (node instanceof z.ZodObject) {
    const shape: Readonly<Record<string, z.core.$ZodType>> = node.shape;
    return (typeof key === 'string' && Object.hasOwn(shape, key) ? shape[key] : undefined) ?? node._zod.def.catchall;
  }
  if (node instanceof z.ZodRecord) return node._zod.def.valueType;
  if (node instanceof z.ZodArray) return node.element;
  return undefined;
};
