import type { AttachRequest } from '../../../domain/did/didContent.ts';
import type { DidRef } from '../../../domain/did/did.ts';
import type { RucioError } from '../../../domain/shared/errors.ts';
import { InvalidObject, TypeError_, ValueError } from '../../../domain/shared/errors.ts';
import { isValidName, NAME_RULES, valueProblem } from '../../../domain/shared/names.ts';
import { jsonValueBody } from '../../params.ts';
import { checkedBy, convertedBy, missingAs, refusedAs, type Refusal } from '../../routeInput.ts';
import { z } from 'zod';

/**
 * Reading DID requests the way Rucio's views and schemas do (lib/rucio/common/schema/generic.py):
 * invalid shapes are InvalidObject "Problem validating <schema>: <detail>".
 */

const SCOPE_NAME_PATTERN = '/([^/]+)/(.*)';

/** Rucio's `parse_scope_name`: the first segment is the scope, everything after it the name. */
export const parseScopeName = (scopeName: string): DidRef => {
  // Python's re.match: anchored at the start only, `.` stopping at a newline.
  const match = /^\/([^/]+)\/(.*)/.exec(`/${scopeName}`);
  if (!match) {
    throw new ValueError(
      `Could not parse '/${scopeName}' (scope_name='${scopeName}') with pattern '${SCOPE_NAME_PATTERN}' into scope and name.`,
    );
  }
  return { scope: match[1]!, name: match[2]! };
};

/** The `*scope_name` path variable, parsed into scope and name. */
export const scopeNamePath = () =>
  convertedBy(z.string().describe('A DID as `scope/name`; the name may hold slashes.'), parseScopeName);

const problem = (schema: string, detail: string): never => {
  throw new InvalidObject(`Problem validating ${schema}: ${detail}`);
};

/** A schema's answer: InvalidObject "Problem validating <schema>: <detail>". */
export const invalidIn =
  (schema: string, detail: (refusal: Refusal) => string) =>
  (refusal: Refusal): RucioError =>
    new InvalidObject(`Problem validating ${schema}: ${detail(refusal)}`);

/** An object inside a body checked by Rucio's schema `schema`: anything else is "<value> is not of type 'object'". */
export const objectIn = <Shape extends z.core.$ZodLooseShape>(schema: string, shape: Shape) =>
  refusedAs(
    z.looseObject(shape),
    invalidIn(schema, ({ input }) => `${JSON.stringify(input)} is not of type 'object'`),
  );

/** A list inside a body: not a list, or of more than `maxItems` items, is refused before its items are read. */
export const listIn = <Item extends z.ZodType>(schema: string, item: Item, maxItems = 1000) =>
  refusedAs(
    z.array(item).max(maxItems),
    invalidIn(schema, ({ issue, input }) =>
      issue.code === 'too_big' && Array.isArray(input)
        ? `the array has ${input.length} items, more than ${maxItems}`
        : `${JSON.stringify(input)} is not of type 'array'`,
    ),
  );

/** A required key of an item: "'<key>' is a required property" when it is missing. */
export const requiredIn = <T extends z.ZodType>(schema: string, value: T): T =>
  missingAs(
    value,
    invalidIn(schema, ({ key }) => `'${String(key)}' is a required property`),
  );

/**
 * A scope or name checked by Rucio's schema `schema`: text of the generic schema's pattern and
 * length, without a `.`, `..` or empty path segment.
 */
export const didPartIn = (schema: string, kind: 'scope' | 'name') =>
  refusedAs(
    checkedBy(
      z.string().meta({ pattern: NAME_RULES[kind].pattern.source, maxLength: NAME_RULES[kind].maxLength }),
      (value) => {
        const found = valueProblem(kind, value);
        if (found !== undefined) problem(schema, found);
      },
    ),
    invalidIn(schema, ({ input }) => `${JSON.stringify(input)} is not of type 'string'`),
  );

/** A scope or name of an item (`didPartIn`), required. */
const didPart = (schema: string, kind: 'scope' | 'name') => requiredIn(schema, didPartIn(schema, kind));

/** The scope and name of a `{scope, name}` item, as `shape` keys (for items that hold more). */
export const didRefShape = (schema: string) => ({ scope: didPart(schema, 'scope'), name: didPart(schema, 'name') });

/** A `{scope, name}` item of a request body, names checked; its other keys are dropped. */
export const didRefIn = (schema: string) =>
  objectIn(schema, didRefShape(schema)).transform(({ scope, name }): DidRef => ({ scope, name }));

const checksumIn = (schema: string, pattern: RegExp) =>
  refusedAs(
    z.string().regex(pattern),
    invalidIn(schema, ({ input }) => `${JSON.stringify(input)} does not match '${pattern.source}'`),
  ).optional();

/** A child of an attachment (schema `dids`): scope, name, and the file facts to check; other keys dropped. */
const attachRequestIn = (schema: string) =>
  objectIn(schema, {
    ...didRefShape(schema),
    bytes: refusedAs(
      z.number().refine(Number.isSafeInteger).min(0),
      invalidIn(
        schema,
        ({ input }) => `${JSON.stringify(input)} is not a number of bytes (a whole number from 0 to 2^53-1)`,
      ),
    ).optional(),
    adler32: checksumIn(schema, /^[a-fA-F\d]{8}$/),
    md5: checksumIn(schema, /^[a-fA-F\d]{32}$/),
  }).transform(({ scope, name, bytes, adler32, md5 }): AttachRequest => ({
    scope,
    name,
    ...(bytes !== undefined ? { bytes } : {}),
    ...(adler32 !== undefined ? { adler32 } : {}),
    ...(md5 !== undefined ? { md5 } : {}),
  }));

/**
 * The children of an attachment: the list itself (its type, at most 1000 items) is judged before
 * any item, as Rucio's schema judges it, so it is a stage of its own.
 */
export const attachRequestsIn = (schema: string) => listIn(schema, z.unknown()).pipe(z.array(attachRequestIn(schema)));

/**
 * Attachments take no rules (Rucio's attachment schema has none and its views never read them):
 * rather than drop them silently, a request naming some is refused, before anything else is read.
 */
export const noRuleOptions = () =>
  z.looseObject({
    rules: refusedAs(
      z.custom((rules) => rules === null || (Array.isArray(rules) && rules.length === 0)),
      () =>
        new InvalidObject(
          "Problem validating attachment: Additional properties are not allowed ('rules' was unexpected)",
        ),
    ).optional(),
  });

/** The `account` that owns the files an attachment creates: an account name (null: none). */
export const fileOwnerIn = (schema: string) =>
  refusedAs(
    z.string().refine((account) => isValidName('account', account)),
    invalidIn(schema, ({ input }) => `account ${JSON.stringify(input)} is not a valid account name`),
  ).nullish();

/** A JSON body that may be an object or a list (POST /dids/attachments), then read by `schema`. */
export const jsonObjectOrListBody = <T>(
  schema: z.ZodType<T, Record<string, unknown> | unknown[]>,
  description: string,
) =>
  jsonValueBody(
    refusedAs(
      z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).describe(description),
      () => new TypeError_('body must be a json dictionary or list'),
    ).pipe(schema),
    'dictionary or list',
  );
