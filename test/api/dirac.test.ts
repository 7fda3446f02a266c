import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { protocol, rseWithProtocols } from './replicaSupport.ts';

type Rule = {
  id: string;
  rse_expression: string;
  grouping: string;
  account: string;
  expires_at: string | null;
  state: string;
  locks_ok_cnt: number;
};

/**
 * DIRAC's catalogue integration over HTTP (`POST /dirac/addfiles`, Rucio's core/dirac.py) with the
 * `dirac` scope convention: `/<vo>/<scope>/<directories>/<file>`.
 */
describe('API: DIRAC add_files', function () {
  this.timeout(30_000);
  let server: TestServer;
  let rse: string;
  before(async () => {
    server = await startTestServer();
    expectStatus(await server.root('PUT', '/config/common/extract_scope/dirac'), 201);
    ({ rse } = await rseWithProtocols(server, [{ root: protocol('root', `${uniqueName('dirac')}.example.org`) }]));
    expectStatus(await server.root('POST', `/rses/${rse}/attr/ANY`, { body: { value: true } }), 201);
  });
  after(async () => server.stop());

  /** A VO with its top container `/<vo>` (scope `<vo>`) and a scope of its own, as DIRAC deployments set them up. */
  const newVo = async (options: { topContainer?: boolean } = {}) => {
    const [vo, scope] = [uniqueName('vo'), uniqueName('sc')];
    for (const name of [vo, scope]) expectStatus(await server.root('POST', `/scopes/root/${name}`), 201);
    if (options.topContainer ?? true)
      expectStatus(
        await server.root('POST', '/dids', { body: [{ scope: vo, name: `/${vo}`, type: 'CONTAINER' }] }),
        201,
      );
    return { vo, scope, base: `/${vo}/${scope}` };
  };
  const lfn = (path: string, extra: object = {}) => ({ lfn: path, rse, bytes: 10, adler32: '0cc737eb', ...extra });
  const addFiles = (body: object, token = server.rootToken) => server.call('POST', '/dirac/addfiles', { body, token });
  const did = (scope: string, name: string, suffix = '') => `/dids/${scope}/${name}${suffix}`;
  const content = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', did(scope, name, '/dids')), 200)
      .lines<{ name: string; type: string }>()
      .map((line) => [line.name, line.type]);
  const rulesOf = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', did(scope, name, '/rules')), 200).lines<Rule>();
  const head = () => server.runtime.services.commands.eventStore.headPosition();

  it('registers a file with its replica, its dataset with a rule on ANY=true, the containers above and the file’s own rule, answering Created', async () => {
    const { vo, scope, base } = await newVo();
    // DIRAC chooses the paths itself: its storage elements are not deterministic.
    const host = `${uniqueName('se')}.example.org`;
    const { rse: storage } = await rseWithProtocols(server, [{ root: protocol('root', host) }], {
      deterministic: false,
    });
    expectStatus(await server.root('POST', `/rses/${storage}/attr/ANY`, { body: { value: true } }), 201);
    const file = `${base}/run1/raw/f1`;
    const pfn = `root://${host}:1094/data${file}`;
    const response = expectStatus(
      await addFiles({
        lfns: [lfn(file, { rse: storage, guid: '8afc4f3e-2e4d-4c4b-9f16-7d3d2a1b0c9e', pfn })],
        parents_metadata: { [`${base}/run1/raw`]: { campaign: 'c1' } },
      }),
      201,
    );
    expect(response.text).to.equal('Created');
    expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(await content(vo, `/${vo}`)).to.deep.equal([[base, 'CONTAINER']]);
    expect(await content(scope, base)).to.deep.equal([[`${base}/run1`, 'CONTAINER']]);
    expect(await content(scope, `${base}/run1`)).to.deep.equal([[`${base}/run1/raw`, 'DATASET']]);
    expect(await content(scope, `${base}/run1/raw`)).to.deep.equal([[file, 'FILE']]);
    const [datasetRule] = await rulesOf(scope, `${base}/run1/raw`);
    // Both rules lock the new replica where it is, in the same step: nothing to transfer.
    expect(datasetRule).to.include({
      rse_expression: 'ANY=true',
      grouping: 'NONE',
      account: 'root',
      expires_at: null,
      state: 'OK',
      locks_ok_cnt: 1,
    });
    const [fileRule] = await rulesOf(scope, file);
    expect(fileRule).to.include({ rse_expression: storage, account: 'root', state: 'OK', locks_ok_cnt: 1 });
    expect(Date.parse(fileRule!.expires_at!) - Date.now()).to.be.within(86_400_000 - 120_000, 86_400_000);
    const meta = expectStatus(await server.root('GET', did(scope, `${base}/run1/raw`, '/meta')), 200).json();
    expect(meta).to.include({ campaign: 'c1' });
    const replicas = expectStatus(
      await server.root('POST', '/replicas/list', { body: { dids: [{ scope, name: file }] } }),
      200,
    ).lines<{ rses: Record<string, string[]>; adler32: string }>();
    expect(replicas[0]!.rses).to.deep.equal({ [storage]: [pfn] });
    expect(expectStatus(await server.root('GET', did(scope, file)), 200).json()).to.include({ bytes: 10 });
  });

  it('puts every file of one directory in the one dataset it creates', async () => {
    const { scope, base } = await newVo();
    const files = ['a', 'b'].map((name) => `${base}/ds/${name}`);
    expectStatus(await addFiles({ lfns: files.map((file) => lfn(file)) }), 201);
    expect((await content(scope, `${base}/ds`)).map(([name]) => name).sort()).to.deep.equal(files);
    expect(await rulesOf(scope, `${base}/ds`)).to.have.length(1);
  });

  it('skips a file already catalogued and adds the others to its existing dataset', async () => {
    const { scope, base } = await newVo();
    const [first, second] = ['a', 'b'].map((name) => `${base}/ds/${name}`);
    expectStatus(await addFiles({ lfns: [lfn(first!)] }), 201);
    expectStatus(await addFiles({ lfns: [lfn(first!, { bytes: 999 }), lfn(second!)] }), 201);
    expect((await content(scope, `${base}/ds`)).map(([name]) => name).sort()).to.deep.equal([first, second]);
    expect(expectStatus(await server.root('GET', did(scope, first!)), 200).json()).to.include({ bytes: 10 });
  });

  it('refuses the whole call when the VO’s top container does not exist, naming it, and writes nothing', async () => {
    const { vo, base } = await newVo({ topContainer: false });
    const before = await head();
    expectError(
      await addFiles({ lfns: [lfn(`${base}/ds/f`)] }),
      404,
      'DataIdentifierNotFound',
      new RegExp(`top container ${vo}:/${vo} does not exist`),
    );
    expect(await head()).to.equal(before);
  });

  it('refuses a directory that is a dataset where a container is needed (405 UnsupportedOperation), writing nothing', async () => {
    const { base } = await newVo();
    expectStatus(await addFiles({ lfns: [lfn(`${base}/ds/f`)] }), 201);
    const before = await head();
    expectError(
      await addFiles({ lfns: [lfn(`${base}/other/g`), lfn(`${base}/ds/sub/f`)] }),
      405,
      'UnsupportedOperation',
      /as container/,
    );
    expect(await head()).to.equal(before);
  });

  it('refuses the whole call when one file’s dataset is closed, registering none of the others (one atomic step)', async () => {
    const { scope, base } = await newVo();
    expectStatus(await addFiles({ lfns: [lfn(`${base}/closed/a`)] }), 201);
    expectStatus(await server.root('PUT', did(scope, `${base}/closed`, '/status'), { body: { open: false } }), 200);
    const before = await head();
    expectError(
      await addFiles({ lfns: [lfn(`${base}/fresh/b`), lfn(`${base}/closed/c`)] }),
      405,
      'UnsupportedOperation',
    );
    expect(await head()).to.equal(before);
    expectError(await server.root('GET', did(scope, `${base}/fresh/b`)), 404, 'DataIdentifierNotFound');
  });

  it('refuses the whole call for one file on an unknown RSE (404), writing nothing', async () => {
    const { base } = await newVo();
    const before = await head();
    expectError(
      await addFiles({ lfns: [lfn(`${base}/ds/f`), lfn(`${base}/ds/g`, { rse: 'NO_SUCH_RSE' })] }),
      404,
      'RSENotFound',
    );
    expect(await head()).to.equal(before);
  });

  it('refuses an LFN that is not a path /<vo>/<directory>/<file> (400 InvalidPath)', async () => {
    const { vo } = await newVo();
    for (const path of [`${vo}/sc/ds/f`, `/${vo}/f`, `/${vo}//ds/f`])
      expectError(await addFiles({ lfns: [lfn(path)] }), 400, 'InvalidPath');
  });

  it('refuses a body without lfns (KeyError)', async () => {
    expectError(await addFiles({}), 400, 'KeyError', /'lfns' not defined/);
  });

  it('renews the lifetime of an existing dataset’s ANY=true rule from dirac.lifetime, matching its scope', async () => {
    const { scope, base } = await newVo();
    expectStatus(await addFiles({ lfns: [lfn(`${base}/ds/a`)] }), 201);
    expectStatus(
      await server.root(
        'PUT',
        `/config/dirac/lifetime/${encodeURIComponent(JSON.stringify({ [scope.slice(0, 4)]: 3600 }))}`,
      ),
      201,
    );
    try {
      expectStatus(await addFiles({ lfns: [lfn(`${base}/ds/b`)] }), 201);
      const [rule] = await rulesOf(scope, `${base}/ds`);
      expect(Date.parse(rule!.expires_at!) - Date.now()).to.be.within(3_600_000 - 120_000, 3_600_000);
    } finally {
      expectStatus(await server.root('DELETE', '/config/dirac/lifetime'), 200);
    }
  });

  it('reads scopes by the def convention without common.extract_scope, and says so when that scope does not exist', async () => {
    const { base } = await newVo();
    expectStatus(await server.root('DELETE', '/config/common/extract_scope'), 200);
    try {
      expectError(await addFiles({ lfns: [lfn(`${base}/ds/f`)] }), 404, 'ScopeNotFound', /'def' convention/);
    } finally {
      expectStatus(await server.root('PUT', '/config/common/extract_scope/dirac'), 201);
    }
  });

  it('is for accounts that may add DIDs in the files’ scopes', async () => {
    const { base } = await newVo();
    const user = await server.createUser();
    expectError(await addFiles({ lfns: [lfn(`${base}/ds/f`)] }, user.token), 401, 'AccessDenied');
  });
});
