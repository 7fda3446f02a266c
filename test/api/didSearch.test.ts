import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { aFile, newScope, path, registerFiles } from '../support/dids.ts';

describe('API: searching DIDs (behaviour rule 6)', () => {
  let server: TestServer;
  let scope: string;
  before(async () => {
    server = await startTestServer();
    scope = await newScope(server);
    await registerFiles(server, [aFile(scope, 'run_1.file', { bytes: 5 }), aFile(scope, 'runX1.file', { bytes: 7 })]);
    for (const [name, type] of [
      ['run_1', 'DATASET'],
      ['runX1', 'DATASET'],
      ['runs', 'CONTAINER'],
      ['empty', 'DATASET'],
    ]) {
      expectStatus(await server.root('POST', path(scope, name!), { body: { type } }), 201);
    }
    expectStatus(
      await server.root('POST', path(scope, 'run_1', '/dids'), { body: { dids: [{ scope, name: 'run_1.file' }] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'runs', '/dids'), {
        body: {
          dids: [
            { scope, name: 'run_1' },
            { scope, name: 'runX1' },
          ],
        },
      }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'runX1', '/meta'), { body: { meta: { project: 'p1', colour: 'red' } } }),
      201,
    );
  });
  after(async () => server.stop());

  /** The search the Python client sends: `filters` as a Python literal, booleans as True/False. */
  const search = (filters: string, options: Record<string, string> = {}) =>
    server.root(
      'GET',
      `/dids/${scope}/dids/search?${new URLSearchParams({ type: 'collection', filters, long: 'False', recursive: 'False', ...options })}`,
    );

  const names = async (filters: string, options: Record<string, string> = {}) =>
    expectStatus(await search(filters, options), 200)
      .lines<string>()
      .sort();

  it('matches name patterns where only * and % are wildcards', async () => {
    expect(await names("[{'name': 'run_*'}]")).to.deep.equal(['run_1']);
    expect(await names("[{'name': 'run*'}]")).to.deep.equal(['runX1', 'run_1', 'runs']);
    expect(await names("[{'name': 'run%1'}]", { type: 'all' })).to.deep.equal(['runX1', 'run_1']);
    expect(await names("[{'name': '*.file'}]", { type: 'file' })).to.deep.equal(['runX1.file', 'run_1.file']);
  });

  it('filters by type, length, creation time and metadata, with OR groups', async () => {
    expect(await names("[{'name': '*'}]", { type: 'container' })).to.deep.equal(['runs']);
    expect(await names("[{'length.gt': 0}]")).to.deep.equal(['run_1', 'runs']);
    expect(await names("[{'length': 2}, {'name': 'empty'}]")).to.deep.equal(['empty', 'runs']);
    expect(await names("[{'project.ne': 'p1'}]", { type: 'dataset' })).to.deep.equal(['empty', 'run_1']);
    expect(
      await names("[{'created_after': '2000-01-01T00:00:00', 'created_before': 'Mon, 01 Jan 3000 00:00:00 UTC'}]", {
        type: 'dataset',
      }),
    ).to.deep.equal(['empty', 'runX1', 'run_1']);
    expect(await names("[{'colour': 'red'}]")).to.deep.equal(['runX1']);
    expect(await names("[{'name': 'run_1', 'type': 'all'}]")).to.deep.equal(['run_1']);
  });

  it('answers long records, limits, recursion and the query-parameter form', async () => {
    const long = expectStatus(await search("[{'name': 'run_1'}]", { long: 'True' }), 200);
    expect(long.headers['content-type']).to.equal('application/x-json-stream');
    expect(long.lines()).to.deep.equal([{ scope, name: 'run_1', did_type: 'DATASET', bytes: 5, length: 1 }]);
    expect(expectStatus(await search("[{'colour': 'red'}]", { long: 'True' }), 200).lines()).to.deep.equal([
      { scope, name: 'runX1', did_type: null, bytes: null, length: null },
    ]);
    expect(expectStatus(await search("[{'name': 'run*'}]", { limit: '2' }), 200).lines()).to.have.length(2);
    expect(await names("[{'name': 'runs'}]", { recursive: 'True', type: 'all' })).to.deep.equal([
      'runX1',
      'run_1',
      'run_1.file',
      'runs',
    ]);
    const legacy = expectStatus(
      await server.root('GET', `/dids/${scope}/dids/search?type=dataset&name=run*&length.gte=1`),
      200,
    );
    expect(legacy.lines()).to.deep.equal(['run_1']);
  });

  it('refuses bad types, mixed plugins, unknown columns and unreadable filters', async () => {
    expectError(
      await search("[{'name': '*'}]", { type: 'box' }),
      409,
      'UnsupportedOperation',
      /box is not a valid type/,
    );
    expectError(await search("[{'length.gt': 1, 'colour': 'red'}]"), 400, 'InvalidMetadata', /same metadata plugin/);
    expectError(await search("[{'lifetime': 5}]"), 404, 'KeyNotFound', /could not be coerced/);
    expectError(await search("[{'length': 'many'}]"), 400, 'ValueError', /Length has to be an integer value./);
    expectError(await search("[{'name': 'run*'"), 400, 'DIDFilterSyntaxError', /Could not read the filters/);
    expectError(
      await search("[{'name': ['a']}]"),
      400,
      'DIDFilterSyntaxError',
      /^Filter values must be single values, not \["a"\]$/,
    );
    // `long` is read before the filters.
    expectError(await search('[1]', { long: 'perhaps' }), 400, 'TypeError', /^'long' must be a boolean type\.$/);
    expectError(await search('[1]'), 400, 'DIDFilterSyntaxError', /unrecognised type/);
    expectError(
      await search("[{'name': '*'}]", { long: 'perhaps' }),
      400,
      'TypeError',
      /'long' must be a boolean type/,
    );
    expect(
      expectStatus(
        await server.root('GET', `/dids/nosuchscope/dids/search?filters=${encodeURIComponent("[{'name': '*'}]")}`),
        200,
      ).text,
    ).to.equal('');
  });
});
