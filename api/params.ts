import { z } from 'zod';
import { InvalidObject, TypeError_, type RucioError } from '../domain/shared/errors.ts';
import { checkText } from '../domain/shared/limits.ts';
import { assertValidName, NAME_RULES, type NameKind } from '../domain/shared/names.ts';
import { checkedBy, parsed, queryStringOf, refusedAs, type JsonBody, type Refusal } from './routeInput.ts';
import { isRecord } from '../domain/shared/narrowing.ts';

/**
 * The zod building blocks routes declare their input with (api/routeInput.ts), each answering a
 * bad value as Rucio's helpers (flaskapi/v1/common.py `json_parameters`, `param_get`) and schemas
 * (lib/rucio/common/schema/generic.py) answer it. Areas keep their own blocks beside their routes
 * (`api/routes/<area>/<area>Params.ts`), made of these.
 */

type BodyOptions = {
  /** An empty body is `{}` (or `[]`). */
  optional?: boolean;
  description?: string;
  /**
   * What the OpenAPI document describes in place of the body's schema: the stage of a body read
   * in stages that names every key.
   */
  documentedBy?: z.ZodType;
};

/**
 * A JSON object body (Rucio's `json_parameters`): not JSON is ValueError "cannot decode json
 * parameter dictionary", JSON of another type TypeError; each key of `shape` is then checked, a
 * missing required key being KeyError "'<key>' not defined". Keys outside the shape are kept.
 * `optional`: an empty body is `{}`.
 */
export const jsonObjectBody = <Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  options: BodyOptions = {},
): JsonBody<z.output<z.ZodObject<Shape, z.core.$loose>>> => ({
  schema: jsonDictionary(shape, options.description),
  what: 'dictionary',
  ...(options.optional ? { empty: {} } : {}),
  ...(options.documentedBy ? { documentedBy: options.documentedBy } : {}),
});

/**
 * A JSON object body checked by `schema` (an object schema, perhaps in stages or converted):
 * refused as `jsonObjectBody` refuses what is not JSON or not an object. For a body read in
 * stages, `documentedBy` names the stage that describes every key.
 */
export const jsonObjectBodyOf = <T>(schema: z.ZodType<T>, options: BodyOptions = {}): JsonBody<T> => ({
  schema: refusedAs(options.description ? schema.describe(options.description) : schema, notDictionary),
  what: 'dictionary',
  ...(options.optional ? { empty: {} } : {}),
  ...(options.documentedBy ? { documentedBy: options.documentedBy } : {}),
});

/**
 * An object whose `keys` Rucio looks for (`param_get`: KeyError) before it checks any value,
 * then checked by `shape`: the first stage of a body read in that order (its values are all
 * checked by `shape`, which documents it).
 */
export const keysFirst = <Then extends z.ZodType<unknown, Readonly<Record<string, unknown>>>>(
  keys: readonly string[],
  then: Then,
) => z.looseObject(Object.fromEntries(keys.map((key) => [key, requiredValue()]))).pipe(then);

/** A JSON object (of a body, or inside one), refused as TypeError "body must be a json dictionary". */
export const jsonDictionary = <Shape extends z.core.$ZodLooseShape>(shape: Shape, description?: string) => {
  const schema = z.looseObject(shape);
  return refusedAs(description ? schema.describe(description) : schema, notDictionary);
};

const notDictionary = (): RucioError => new TypeError_('body must be a json dictionary');

/** A JSON list body: TypeError "body must be a json list" for another JSON type; `optional`: empty is `[]`. */
export const jsonListBody = <Item extends z.ZodType>(
  item: Item,
  options: BodyOptions = {},
): JsonBody<z.output<Item>[]> => {
  const list = z.array(item);
  return {
    schema: refusedAs(
      options.description ? list.describe(options.description) : list,
      () => new TypeError_('body must be a json list'),
    ),
    what: 'list',
    ...(options.optional ? { empty: [] } : {}),
  };
};

/** Any JSON value, named `what` when it is not JSON ("cannot decode json parameter <what>"). */
export const jsonValueBody = <T>(schema: z.ZodType<T>, what: string): JsonBody<T> => ({ schema, what });

/** Rucio's booleans in a body: JSON booleans, the strings true/false/1/0 (any case), the integers 1/0. */
const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, '1': true, false: false, '0': false };

const asRucioBoolean = (value: unknown): unknown => {
  if (typeof value === 'string') return BOOLEAN_TEXT[value.toLowerCase()] ?? value;
  if (typeof value === 'number') return BOOLEAN_TEXT[String(value)] ?? value;
  return value;
};

const notBoolean = ({ key }: Refusal): RucioError => new TypeError_(`'${String(key)}' must be a boolean type.`);

/**
 * A boolean as Rucio takes it (`toBoolean`): anything else is TypeError "'<key>' must be a
 * boolean type.".
 */
export const rucioBoolean = () =>
  z.preprocess(
    asRucioBoolean,
    refusedAs(z.boolean(), notBoolean).describe('A boolean; also "true"/"false"/"1"/"0" (any case) or 1/0.'),
  );

/** An optional Rucio boolean: absent or null is `fallback`. */
export const optionalBoolean = (fallback: boolean) =>
  rucioBoolean()
    .nullish()
    .transform((value) => value ?? fallback);

/** The first value of a repeated query parameter (as Flask's `request.args.get`). */
const firstValue = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);

/** A query parameter's text (its first value); absent stays undefined. */
export const queryText = () => z.preprocess(firstValue, z.string().optional());

/** A query integer as Flask's `type=int` reads it (its first value): anything else is `fallback`. */
export const queryInteger = (fallback: number) =>
  queryText().transform((text) => (text !== undefined && /^[+-]?\d+$/.test(text.trim()) ? Number(text) : fallback));

/** A query parameter as a Rucio boolean (its first value), `fallback` when absent. */
export const queryBoolean = (fallback: boolean) =>
  z.preprocess(firstValue, rucioBoolean().optional()).transform((value) => value ?? fallback);

/** A query object: the parameters a route reads; others are ignored, as Flask ignores them. */
export const queryOf = <Shape extends z.core.$ZodLooseShape>(shape: Shape) => z.looseObject(shape);

/**
 * A query given as URL-encoded JSON (Rucio's bad-replica listings: the Python client sends
 * `?{"state": "B", ...}`), else an ordinary query string; either way checked by `shape`, whose
 * keys are `jsonQueryValue`s.
 */
export const jsonQueryOf = <Shape extends z.core.$ZodLooseShape>(shape: Shape) =>
  z.preprocess((query) => {
    const text = queryStringOf(query);
    let decoded: unknown;
    try {
      decoded = text ? JSON.parse(decodeURIComponent(text)) : undefined;
    } catch {
      decoded = undefined;
    }
    return isRecord(decoded) ? decoded : query;
  }, z.looseObject(shape));

/** The first of several values of a `jsonQueryOf` query, as text; empty or null is absent. */
const firstText = (value: unknown): string | undefined => {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null || first === '' ? undefined : String(first);
};

/** A value of a `jsonQueryOf` query (`firstText`), checked by `schema`. */
export const jsonQueryValueOf = <T extends z.ZodType>(schema: T) => z.preprocess(firstText, schema);

/** A text value of a `jsonQueryOf` query. */
export const jsonQueryValue = () => jsonQueryValueOf(z.string().optional());

/** A query parameter not named in advance (a filter on any column): its first value. */
export const queryFilter = () => z.preprocess(firstValue, z.string());

/** A query whose every parameter is a filter: each key with its first value. */
export const queryFilters = () => z.record(z.string(), queryFilter());

/** A key of a JSON object that must be there (KeyError "'<key>' not defined" otherwise), of any JSON type. */
export const requiredValue = () => z.unknown().nonoptional();

/**
 * A key Rucio reads only for some callers (a decision of the handler: who may sign, ...): the
 * handler gets a reader that checks the value by `schema` when called, throwing the RucioError
 * `schema` answers, so a caller for whom the key is not read is never refused for it.
 */
export const readWhenAsked = <T>(schema: z.ZodType<T>) =>
  z
    .unknown()
    .optional()
    .transform((value) => (): T => parsed(schema, value));

/** `schema`, or null where the key is absent or null (Rucio's `param_get(..., default=None)`). */
export const orNull = <T extends z.ZodType>(schema: T) =>
  schema.nullish().transform((value): z.output<T> | null => value ?? null);

/**
 * InvalidObject "Problem validating <key>: <value as JSON> is not <expected>": how this service
 * answers a value of the wrong type or range where Rucio would fail later (in its database).
 */
export const notA =
  (expected: string) =>
  ({ key, input }: Refusal): RucioError =>
    new InvalidObject(`Problem validating ${String(key)}: ${JSON.stringify(input)} is not ${expected}`);

/** Path variables: each a string of the path, checked by its schema. */
export const pathOf = <Shape extends z.core.$ZodShape>(shape: Shape) => z.object(shape);

/** A path variable taken as given (a lookup answers for a name that names nothing). */
export const pathText = () => z.string();

/**
 * A name held to Rucio's generic schema for `kind` (pattern, length, no climbing segment):
 * InvalidObject "Problem validating <kind>: ..." otherwise.
 */
export const validName = (kind: NameKind) =>
  refusedAs(
    checkedBy(
      z.string().meta({ pattern: NAME_RULES[kind].pattern.source, maxLength: NAME_RULES[kind].maxLength }),
      (value) => assertValidName(kind, value),
    ),
    ({ input }) => new InvalidObject(`Problem validating ${kind}: ${JSON.stringify(input)} is not of type 'string'`),
  );

/**
 * Text of at most `maxLength` characters, without control characters unless `multiline`:
 * InvalidObject "Problem validating <what>: ..." otherwise (`checkText`).
 */
export const boundedText = (what: string, maxLength: number, options: { multiline?: boolean } = {}) =>
  checkedBy(z.string().meta({ maxLength }), (value) => checkText(what, value, maxLength, options));
