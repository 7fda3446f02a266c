import { getJson } from './api.js';

/**
 * The lists of values the console offers (rule states, activities, groupings, RSE types, …) as
 * the API itself declares them: read from its OpenAPI document (`GET /openapi.json`, made from the
 * routes' own zod schemas), so a value the API adds or drops shows in the console with no copy to
 * keep in step. The document is fetched once per page load and shared by every page.
 */

/** @type {Promise<any> | undefined} */
let document;

/** The API's OpenAPI document, fetched at the first call; a failed fetch is tried again next time. */
export const apiDocument = () => {
  document ??= getJson('/openapi.json', { anonymous: true }).catch((error) => {
    document = undefined;
    throw error;
  });
  return document;
};

/**
 * Where an enum is in the document: an operation as `METHOD /path/{template}` (as the document
 * writes its paths) and the property of its JSON body or the parameter of its query.
 * @typedef {{ operation: string, body: string } | { operation: string, query: string }} EnumAddress
 */

/** @param {EnumAddress} address */
const describe = (address) =>
  `${address.operation} ${'body' in address ? `body property ${address.body}` : `query parameter ${address.query}`}`;

/**
 * The values of an enum of the API's document: those of `enum` in the schema found at `address`,
 * or in the one of its alternatives that has one (an optional value is `anyOf` the enum and null).
 * Throws, naming the address, when the document has no such schema or it lists no values.
 * @param {EnumAddress} address
 * @returns {Promise<string[]>}
 */
export const enumOf = async (address) => {
  const found = enumIn(await apiDocument(), address);
  if (!found) throw new Error(`The API’s document (/openapi.json) lists no values for ${describe(address)}.`);
  return found;
};

/**
 * The enum at `address` in `openApi`, or undefined.
 * @param {any} openApi
 * @param {EnumAddress} address
 * @returns {string[] | undefined}
 */
export const enumIn = (openApi, address) => {
  const [method = '', path = ''] = address.operation.split(' ');
  const operation = openApi?.paths?.[path]?.[method.toLowerCase()];
  const schema =
    'body' in address
      ? operation?.requestBody?.content?.['application/json']?.schema?.properties?.[address.body]
      : operation?.parameters?.find(
          (/** @type {any} */ parameter) => parameter.in === 'query' && parameter.name === address.query,
        )?.schema;
  return valuesOf(schema);
};

/**
 * @param {any} schema
 * @returns {string[] | undefined}
 */
const valuesOf = (schema) => {
  if (!schema || typeof schema !== 'object') return undefined;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.map(String);
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const values = valuesOf(alternative);
    if (values) return values;
  }
  return undefined;
};

/** The enums the console offers, each at its place in the API's document. */
export const ENUMS = /** @type {const} */ ({
  ruleState: { operation: 'GET /console/rules', query: 'state' },
  activity: { operation: 'POST /rules/', body: 'activity' },
  grouping: { operation: 'POST /rules/', body: 'grouping' },
  rseType: { operation: 'POST /rses/{rse}', body: 'rse_type' },
  accountType: { operation: 'POST /accounts/{account}', body: 'type' },
  identityType: { operation: 'POST /accounts/{account}/identities', body: 'authtype' },
  actingIdentityType: { operation: 'GET /audit/events', query: 'identity_type' },
  badReplicaState: { operation: 'GET /replicas/bad/states', query: 'state' },
  searchType: { operation: 'GET /dids/{scope}/dids/search', query: 'type' },
});
