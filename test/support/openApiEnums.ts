import { isRecord } from '../../domain/shared/narrowing.ts';

/**
 * Reads the enums of an OpenAPI document (`GET /openapi.json`) for the tests that compare what
 * the console offers, or what the service checks against, with what the document declares.
 */

/** The object at `keys` below `value`; throws naming the keys when there is none. */
export const objectAt = (value: unknown, ...keys: string[]): Record<string, unknown> => {
  let here = value;
  for (const key of keys) here = isRecord(here) ? here[key] : undefined;
  if (!isRecord(here)) throw new Error(`the document has no ${keys.join(' ')}`);
  return here;
};

/** The values of a schema's `enum`, or of the first of its `anyOf` alternatives that has one. */
export const enumValues = (schema: unknown): unknown =>
  !isRecord(schema)
    ? undefined
    : Array.isArray(schema.enum)
      ? schema.enum
      : Array.isArray(schema.anyOf)
        ? schema.anyOf.map(enumValues).find((values) => values !== undefined)
        : undefined;

/** The properties of an operation's JSON body schema (`method` in lower case, as the document has it). */
export const bodyProperties = (document: unknown, path: string, method: string): Record<string, unknown> =>
  objectAt(document, 'paths', path, method, 'requestBody', 'content', 'application/json', 'schema', 'properties');

/** The schema of a query parameter of an operation. */
export const querySchema = (document: unknown, path: string, method: string, name: string): Record<string, unknown> => {
  const { parameters } = objectAt(document, 'paths', path, method);
  const found = Array.isArray(parameters)
    ? parameters.find((parameter) => isRecord(parameter) && parameter.in === 'query' && parameter.name === name)
    : undefined;
  return objectAt(found, 'schema');
};

/** The enum of a body property of an operation. */
export const bodyEnum = (document: unknown, path: string, method: string, property: string): unknown =>
  enumValues(bodyProperties(document, path, method)[property]);

/** The enum of a query parameter of an operation. */
export const queryEnum = (document: unknown, path: string, method: string, name: string): unknown =>
  enumValues(querySchema(document, path, method, name));
