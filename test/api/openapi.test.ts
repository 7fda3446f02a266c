import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { z } from 'zod';
import { routeTable } from '../../api/app.ts';
import { IDENTITY_KINDS } from '../../api/routes/audit/auditParams.ts';
import { ACTIVITIES } from '../../api/routes/rule/ruleParams.ts';
import { ACCOUNT_TYPES } from '../../domain/account/account.ts';
import { IDENTITY_TYPES } from '../../domain/identity/identity.ts';
import { RSE_TYPES } from '../../domain/rse/rse.ts';
import { RULE_GROUPINGS, RULE_STATES } from '../../domain/rule/rule.ts';
import { SEARCH_TYPE_NAMES } from '../../domain/did/didSearch.ts';
import { BAD_STATE_LETTERS } from '../../projections/replica/badReplicasProjection.ts';
import { bodyEnum, queryEnum } from '../support/openApiEnums.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    {
      content?: Record<string, Record<string, unknown>>;
      headers?: Record<string, unknown>;
      'x-exception-classes'?: string[];
    }
  >;
  security?: unknown[];
  'x-dms-routes': string[];
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, string>> };
};

describe('GET /openapi.json', () => {
  let server: TestServer;
  let document: Document;
  before(async () => {
    server = await startTestServer();
    const response = expectStatus(await server.call('GET', '/openapi.json'), 200);
    expect(response.headers['content-type']).to.equal('application/json');
    document = response.json<Document>();
  });
  after(async () => server?.stop());

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
    );

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('documents every route of the table, each in exactly one operation', () => {
    const documented = operations().flatMap(({ operation }) => operation['x-dms-routes']);
    const registered = routeTable(server.runtime.services)
      .entries()
      .map((route) => `${route.method} ${route.path}`);
    expect([...documented].sort()).to.deep.equal([...registered].sort());
  });

  it('finds a schema for every path variable of every route, and a body (or none) for every POST and PUT', () => {
    const missing: string[] = [];
    for (const route of routeTable(server.runtime.services).entries()) {
      const { params, body } = route.options;
      const declared =
        params && '_zod' in params && params instanceof z.ZodObject
          ? Object.keys(params.shape)
          : params && '_zod' in params && params instanceof z.ZodPipe && params.in instanceof z.ZodObject
            ? Object.keys(params.in.shape)
            : [];
      for (const [, variable] of route.path.matchAll(/[:*](\w+)/g))
        if (!declared.includes(variable!)) missing.push(`${route.method} ${route.path}: path variable ${variable}`);
      if ((route.method === 'POST' || route.method === 'PUT') && body === undefined)
        missing.push(`${route.method} ${route.path}: body`);
    }
    expect(missing).to.deep.equal([]);
  });

  it('turns :x and *x into templates, each with its path parameter, and no two templates alike', () => {
    const shapes = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path, path).not.to.match(/[:*]\w/);
      const shape = path.replace(/\{\w+\}/g, '{}');
      expect(shapes.has(shape), `two templates of the shape ${shape}`).to.equal(false);
      shapes.add(shape);
      const variables = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      for (const [method, operation] of Object.entries(item)) {
        const inPath = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
        expect(
          inPath.map((parameter) => parameter.name),
          `${method} ${path}`,
        ).to.deep.equal(variables);
        expect(inPath.every((parameter) => parameter.required)).to.equal(true);
      }
    }
    expect(document.paths['/dids/{scope_name}/dids']?.get)
      .to.have.property('x-dms-routes')
      .that.deep.equals(['GET /dids/*scope_name/dids']);
  });

  it('names the token header as the security scheme, and none for routes without a token', () => {
    expect(document.components.securitySchemes.token).to.deep.include({
      type: 'apiKey',
      in: 'header',
      name: 'X-Svc-Auth-Token',
    });
    expect(document.paths['/ping']!.get!.security).to.deep.equal([]);
    expect(document.paths['/metrics']!.get!.security).to.deep.equal([]);
    expect(document.paths['/accounts/{account}']!.get!.security).to.equal(undefined);
    expect(document.paths['/accounts/{account}']!.get!.responses['401']!['x-exception-classes']).to.include(
      'CannotAuthenticate',
    );
    expect(document.paths['/ping']!.get!.responses).not.to.have.property('401');
  });

  it('marks NDJSON answers as streams of application/x-json-stream', () => {
    const listing = document.paths['/accounts/{account}/identities']!.get!.responses['200']!;
    expect(listing.content).to.have.all.keys('application/x-json-stream');
    expect(listing.content!['application/x-json-stream']).to.have.property('x-stream', 'ndjson');
  });

  it('takes request bodies from the zod schemas of the routes, or of the stage that names every key', () => {
    const addRule = document.paths['/rules/']!.post!;
    const schema = addRule.requestBody!.content['application/json']!.schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(schema.properties).to.include.keys('dids', 'copies', 'rse_expression', 'lifetime', 'activity');
    expect(schema.required).to.include.members(['dids', 'copies', 'rse_expression']);
    expect(addRule.responses['201']!.content).to.have.key('text/html; charset=utf-8');
    expect(addRule.responses['409']!['x-exception-classes']).to.include.members([
      'InvalidObject',
      'InvalidRSEExpression',
    ]);
    const limit = document.paths['/accountlimits/local/{account}/{rse}']!.post!;
    const limitSchema = limit.requestBody!.content['application/json']!.schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(limitSchema.properties).to.have.property('bytes');
    expect(limitSchema.required).to.include('bytes');
  });

  it('documents protocol bodies and the whole import body from the schemas that check them', () => {
    type Schema = { properties: Record<string, Schema>; additionalProperties: Schema; items: Schema; anyOf: Schema[] };
    const bodyOf = (path: string, method: 'post' | 'put') =>
      document.paths[path]![method]!.requestBody!.content['application/json']!.schema as unknown as Schema;
    const added = bodyOf('/rses/{rse}/protocols/{scheme}', 'post');
    expect(added.properties).to.have.keys('domains', 'impl', 'prefix', 'hostname', 'port', 'extended_attributes');
    expect(added.properties.domains!.additionalProperties.additionalProperties.anyOf).to.deep.include({
      type: 'integer',
      minimum: 0,
    });
    const changed = bodyOf('/rses/{rse}/protocols/{scheme}', 'put');
    expect(changed.properties).to.have.keys('domains', 'prefix', 'impl', 'extended_attributes');
    const imported = bodyOf('/import', 'post');
    expect(imported.properties).to.have.keys('rses', 'distances', 'accounts');
    const rse = imported.properties.rses!.anyOf[0]!.additionalProperties;
    expect(rse.properties).to.include.keys('protocols', 'rse_type', 'city', 'qos_class', 'attributes', 'MinFreeSpace');
    expect(rse.properties.protocols!.anyOf[0]!.items.properties).to.include.keys('scheme', 'impl', 'domains');
    const account = imported.properties.accounts!.anyOf[0]!.items;
    expect(account.properties.identities!.anyOf[0]!.items.properties).to.have.keys('type', 'identity', 'password');
  });

  it('gives every error Rucio’s body and headers', () => {
    for (const { path, method, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect(response.headers, `${method} ${path} ${status}`).to.have.all.keys('ExceptionClass', 'ExceptionMessage');
        expect(response.content!['application/octet-stream']!.schema).to.deep.equal({
          $ref: '#/components/schemas/RucioError',
        });
      }
      expect(operation.responses, `${method} ${path}`).to.have.property('500');
    }
  });

  it('lists the query parameters a route declares', () => {
    const feed = document.paths['/audit/events']!.get!;
    expect(
      (feed.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
    ).to.include.members(['account', 'type', 'since', 'until', 'after', 'limit']);
  });

  it('declares as enums, from the lists the service checks against, the values the console offers', () => {
    expect(queryEnum(document, '/console/rules', 'get', 'state')).to.deep.equal([...RULE_STATES]);
    expect(bodyEnum(document, '/rules/', 'post', 'activity')).to.deep.equal([...ACTIVITIES]);
    expect(bodyEnum(document, '/rules/', 'post', 'grouping')).to.deep.equal([...RULE_GROUPINGS]);
    expect(bodyEnum(document, '/rses/{rse}', 'post', 'rse_type')).to.deep.equal([...RSE_TYPES]);
    expect(bodyEnum(document, '/accounts/{account}', 'post', 'type')).to.deep.equal([...ACCOUNT_TYPES]);
    expect(bodyEnum(document, '/accounts/{account}/identities', 'post', 'authtype')).to.deep.equal([...IDENTITY_TYPES]);
    expect(queryEnum(document, '/audit/events', 'get', 'identity_type')).to.deep.equal([...IDENTITY_KINDS]);
    expect(queryEnum(document, '/dids/{scope}/dids/search', 'get', 'type')).to.deep.equal([...SEARCH_TYPE_NAMES]);
    expect(queryEnum(document, '/replicas/bad/states', 'get', 'state')).to.deep.equal([
      ...new Set(Object.values(BAD_STATE_LETTERS)),
    ]);
  });
});
