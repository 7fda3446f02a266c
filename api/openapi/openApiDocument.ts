import { z } from 'zod';
import { NDJSON_TYPE } from '../http.ts';
import type { RouteEntry, RouteOptions } from '../route.ts';
import { API_VERSION } from '../routes/ping/ping.ts';
import { isRecord } from '../../domain/shared/narrowing.ts';

/**
 * The OpenAPI 3.1 document of the route table (`GET /openapi.json`), made from what each route
 * declares: its method and path, whether it needs a token, the content types it answers
 * (`accept`), the statuses it gives exception classes (`errors`), the zod schemas of what it
 * reads (`params`, `query`, `body`: api/routeInput.ts), turned into JSON Schema by zod itself
 * (draft 2020-12, OpenAPI 3.1's dialect), and its documentation fields (`summary`, `success`,
 * `raises`: api/route.ts). What a route does not declare is given by the defaults of its method.
 *
 * Paths: `:x` becomes `{x}`; `*x` (Werkzeug's `path` converter: one or more segments, slashes
 * included) becomes `{x}` too, described as such, since OpenAPI has no multi-segment parameter.
 * Two routes whose paths are then the same template (`GET /dids/:scope` redirects, `GET
 * /dids/*scope_name` answers) share one operation, which names both in `x-dms-routes`; every
 * operation lists the route-table entries it documents there.
 */

export type OpenApiDocument = Readonly<{
  openapi: string;
  info: Record<string, unknown>;
  tags: readonly Readonly<{ name: string }>[];
  security: readonly Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, unknown>;
  [extension: `x-${string}`]: unknown;
}>;

type Operation = {
  operationId: string;
  tags: string[];
  summary?: string;
  description?: string;
  parameters?: Record<string, unknown>[];
  requestBody?: Record<string, unknown>;
  responses: Record<string, Record<string, unknown>>;
  security?: Record<string, string[]>[];
  'x-dms-routes': string[];
};

const TOKEN_HEADER = 'X-Svc-Auth-Token';
const ERROR_BODY_TYPE = 'application/octet-stream';
const EMPTY_OK_TYPE = 'text/html; charset=utf-8';

/** What the path variables the table uses hold, where the name alone does not say it. */
const PATH_VARIABLES: Readonly<Record<string, string>> = {
  scope_name: 'A DID as `scope/name`; the name may hold slashes.',
  rse_expression: 'An RSE expression (percent-encoded).',
  rule_id: 'A rule id (32 hex digits).',
};

const PARAMETER = /([:*])(\w+)/g;

export const openApiDocument = (entries: readonly RouteEntry[]): OpenApiDocument => {
  const names = templateNames(entries);
  const paths: Record<string, Record<string, Operation>> = {};
  const operationIds = new Set<string>();
  // Routes with more `*` variables first: of two routes sharing a template, the general one is described.
  const ordered = [...entries].sort((a, b) => wildcards(b.path) - wildcards(a.path));
  for (const entry of ordered) {
    const key = shapeOf(entry.path);
    const template = names.get(key)!;
    const item = (paths[template.path] ??= {});
    const method = entry.method.toLowerCase();
    const shared = item[method];
    if (shared) {
      shared['x-dms-routes'].push(routeName(entry));
      shared.description = [
        shared.description,
        `\`${routeName(entry)}\` has the same template${entry.options.summary ? `: ${entry.options.summary}` : '.'}`,
      ]
        .filter(Boolean)
        .join('\n\n');
      continue;
    }
    item[method] = operation(entry, template.variables, uniqueId(operationIds, `${method}${template.path}`));
  }
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'dms: a data management service speaking Rucio 39’s REST API',
      version: API_VERSION,
      description:
        'Rucio 39’s REST API, with every `X-Rucio-*` header named `X-Svc-*`. Bodies are JSON whatever their Content-Type (the Python client sends none). ' +
        'Errors carry Rucio’s `ExceptionClass` and `ExceptionMessage`, as headers and as a JSON body. Generated from the route table (api/openapi/openApiDocument.ts).',
    },
    tags: [
      ...new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags))),
    ]
      .sort()
      .map((name) => ({ name })),
    security: [{ token: [] }],
    paths: sortedPaths,
    components: {
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: TOKEN_HEADER,
          description: 'A token from `GET /auth/userpass` (or x509, gss), answered in the same header.',
        },
      },
      schemas: {
        RucioError: {
          type: 'object',
          description: 'Rucio’s error body (typed application/octet-stream, as Rucio sends it).',
          properties: { ExceptionClass: { type: 'string' }, ExceptionMessage: { type: 'string' } },
          required: ['ExceptionClass', 'ExceptionMessage'],
        },
      },
      headers: {
        ExceptionClass: { description: 'The exception class, as in the body.', schema: { type: 'string' } },
        ExceptionMessage: {
          description: 'The message, on one line, cut at 125 characters with `...`.',
          schema: { type: 'string' },
        },
      },
    },
  };
};

const routeName = (entry: RouteEntry): string => `${entry.method} ${entry.path}`;
const wildcards = (path: string): number => [...path.matchAll(PARAMETER)].filter((match) => match[1] === '*').length;
/** The path with its variables unnamed: two routes of one shape are one OpenAPI template. */
const shapeOf = (path: string): string => path.replace(PARAMETER, '{}');

type Template = Readonly<{ path: string; variables: readonly string[] }>;

/** Per shape, the variable names of its most general route (most `*` variables, then the first). */
const templateNames = (entries: readonly RouteEntry[]): Map<string, Template> => {
  const templates = new Map<string, Template & { wildcards: number }>();
  for (const entry of entries) {
    const key = shapeOf(entry.path);
    const count = wildcards(entry.path);
    const known = templates.get(key);
    if (known && known.wildcards >= count) continue;
    templates.set(key, {
      path: entry.path.replace(PARAMETER, '{$2}'),
      variables: [...entry.path.matchAll(PARAMETER)].map((match) => match[2]!),
      wildcards: count,
    });
  }
  return templates;
};

const uniqueId = (taken: Set<string>, wanted: string): string => {
  const base = wanted.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, '');
  let id = base;
  for (let index = 2; taken.has(id); index += 1) id = `${base}_${index}`;
  taken.add(id);
  return id;
};

const operation = (entry: RouteEntry, variables: readonly string[], operationId: string): Operation => {
  const { options } = entry;
  const own = [...entry.path.matchAll(PARAMETER)];
  const declared = objectProperties(options.params);
  const parameters: Record<string, unknown>[] = own.map((match, index) => {
    const name = variables[index] ?? match[2]!;
    const wildcard = match[1] === '*';
    const { description: given, ...schema } = declared.properties[match[2]!] ?? { type: 'string' };
    const description = [
      typeof given === 'string' ? given : PATH_VARIABLES[name],
      wildcard ? 'One or more path segments: may hold `/`.' : undefined,
    ]
      .filter(Boolean)
      .join(' ');
    return { name, in: 'path', required: true, schema, ...(description ? { description } : {}) };
  });
  parameters.push(...queryParameters(options));
  const body = requestBody(entry);
  return {
    operationId,
    tags: [entry.path.split('/')[1] || 'root'],
    ...(options.summary ? { summary: options.summary } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...successResponse(entry), ...errorResponses(entry, body !== undefined) },
    ...(entry.auth ? {} : { security: [] }),
    'x-dms-routes': [routeName(entry)],
  };
};

/** A schema as zod writes it in JSON Schema (draft 2020-12), for what a client sends. */
const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
};

type ObjectSchema = Readonly<{ properties: Record<string, Record<string, unknown>>; required: readonly string[] }>;

/** The properties of an object schema (path variables, query parameters), and which are required. */
const objectProperties = (schema: z.ZodType | undefined): ObjectSchema => {
  if (!schema || !('_zod' in schema)) return { properties: {}, required: [] };
  const { properties, required } = jsonSchemaOf(schema);
  const byName: Record<string, Record<string, unknown>> = {};
  if (isRecord(properties))
    for (const [name, property] of Object.entries(properties)) if (isRecord(property)) byName[name] = property;
  return {
    properties: byName,
    required: Array.isArray(required) ? required.filter((name) => typeof name === 'string') : [],
  };
};

const queryParameters = (options: RouteOptions): Record<string, unknown>[] => {
  const { properties, required } = objectProperties(options.query);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: 'query',
      required: required.includes(name),
      schema: propertySchema,
      ...(typeof description === 'string' ? { description } : {}),
    };
  });
};

const BODY_NOTE = 'JSON; the Content-Type is not read (the Python client sends none).';

const requestBody = (entry: RouteEntry): Record<string, unknown> | undefined => {
  const { body } = entry.options;
  if (body === undefined || body === 'none' || !('schema' in body)) return undefined;
  const { description, ...schema } = jsonSchemaOf(body.documentedBy ?? body.schema);
  const given = body.documentedBy ? jsonSchemaOf(body.schema).description : undefined;
  return {
    required: body.empty === undefined,
    description: [
      typeof given === 'string' ? given : typeof description === 'string' ? description : undefined,
      BODY_NOTE,
    ]
      .filter(Boolean)
      .join(' '),
    content: { 'application/json': { schema } },
  };
};

const successResponse = (entry: RouteEntry): Record<string, Record<string, unknown>> => {
  const { options } = entry;
  const streams = options.accept?.includes(NDJSON_TYPE) ?? false;
  const declared = options.success;
  if (declared === 'none') return {};
  let status: number;
  let types: readonly string[];
  let description: string;
  if (declared) {
    status = declared.status;
    types = declared.type ? [declared.type] : (options.accept ?? []);
    description = declared.description ?? 'Done.';
  } else if (entry.method === 'GET' || (entry.method === 'POST' && streams)) {
    status = 200;
    types = options.accept ?? ['application/json'];
    description = streams ? 'A stream of JSON documents, one per line.' : 'The answer.';
  } else if (entry.method === 'POST') {
    return {
      '201': {
        description: 'Created: the JSON string "Created".',
        content: { 'application/json': { schema: { const: 'Created' } } },
      },
    };
  } else {
    return {
      '200': {
        description: 'Done: an empty body.',
        content: { [EMPTY_OK_TYPE]: { schema: { type: 'string', maxLength: 0 } } },
      },
    };
  }
  const content = Object.fromEntries(types.map((type) => [type, mediaType(type)]));
  return { [String(status)]: { description, ...(types.length > 0 ? { content } : {}) } };
};

const mediaType = (type: string): Record<string, unknown> => {
  if (type === NDJSON_TYPE)
    return {
      schema: { type: 'string', description: 'One JSON document per line, sent as they are read.' },
      'x-stream': 'ndjson',
    };
  if (type.startsWith('application/json')) return { schema: {} };
  return { schema: { type: 'string' } };
};

/**
 * The statuses and exception classes a route can answer: those every route can (a path or query
 * that is not valid text: ValueError; an internal error: RucioException), those its options
 * imply (a token, an Accept list, a body), and those it declares.
 */
const errorResponses = (entry: RouteEntry, readsBody: boolean): Record<string, Record<string, unknown>> => {
  const { options } = entry;
  const byStatus = new Map<number, Set<string>>();
  const add = (status: number, exceptionClass: string) => {
    const classes = byStatus.get(status) ?? new Set<string>();
    classes.add(exceptionClass);
    byStatus.set(status, classes);
  };
  add(400, 'ValueError');
  if (readsBody) {
    add(400, 'TypeError');
    add(400, 'KeyError');
    add(413, 'RequestEntityTooLarge');
  }
  if (entry.auth) {
    add(401, 'CannotAuthenticate');
    if (entry.method !== 'GET') add(401, 'AccessDenied');
  }
  if (options.accept) add(406, 'UnsupportedRequestedContentType');
  for (const errorClass of options.raises ?? [])
    add(options.errors?.[errorClass.exceptionClass] ?? errorClass.httpStatus, errorClass.exceptionClass);
  for (const [exceptionClass, status] of Object.entries(options.errors ?? {})) add(status, exceptionClass);
  add(500, 'RucioException');
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, classes]) => [
        String(status),
        {
          description: [...classes].join(', '),
          headers: {
            ExceptionClass: { $ref: '#/components/headers/ExceptionClass' },
            ExceptionMessage: { $ref: '#/components/headers/ExceptionMessage' },
          },
          content: { [ERROR_BODY_TYPE]: { schema: { $ref: '#/components/schemas/RucioError' } } },
          'x-exception-classes': [...classes],
        },
      ]),
  );
};
