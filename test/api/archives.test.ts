import { expect } from 'chai';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';

describe('API: archives and their constituents', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** A scope, an RSE serving root and https, an archive file with a replica there, in a dataset. */
  const setUp = async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server, [
      { root: protocol('root', 'xrd.example.org', { wan: 1 }) },
      {
        https: protocol(
          'https',
          'web.example.org',
          { wan: 2 },
          { port: 443, impl: 'rucio.rse.protocols.webdav.Default' },
        ),
      },
    ]);
    await addReplicas(server, rse, [fileItem(scope, 'logs.zip'), fileItem(scope, 'old.log')]);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), { body: { dids: [{ scope, name: 'logs.zip' }] } }),
      201,
    );
    return { scope, rse };
  };

  const putIntoArchive = async (scope: string, archive: string, dids: object[]) =>
    server.root('POST', path(scope, archive, '/dids'), { body: { dids } });

  const meta = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', path(scope, name, '/meta')), 200).json<Record<string, unknown>>();

  it('puts new and existing files into an archive file, lists them, and marks the archive, its files and its dataset', async () => {
    const { scope } = await setUp();
    expectStatus(
      await putIntoArchive(scope, 'logs.zip', [
        { scope, name: 'new.log', bytes: 5, adler32: '00000001' },
        { scope, name: 'old.log' },
      ]),
      201,
    );
    const content = expectStatus(await server.root('GET', `/archives/${scope}/logs.zip/files`), 200);
    expect(content.headers['content-type']).to.equal('application/x-json-stream');
    expect(content.lines()).to.deep.equal([
      { scope, name: 'new.log', bytes: 5, adler32: '00000001', md5: null },
      { scope, name: 'old.log', bytes: 100, adler32: '0cc737eb', md5: null },
    ]);
    expect(await meta(scope, 'new.log')).to.deep.include({ did_type: 'FILE', bytes: 5, constituent: true });
    expect(await meta(scope, 'old.log')).to.deep.include({ constituent: true });
    expect(await meta(scope, 'logs.zip')).to.deep.include({ is_archive: true });
    expect(await meta(scope, 'ds')).to.deep.include({ is_archive: true });
    // The constituents are no content of the archive's: its DID listing stays empty.
    expect(expectStatus(await server.root('GET', path(scope, 'logs.zip', '/dids')), 200).lines()).to.deep.equal([]);
  });

  it('lists a constituent with its archives’ PFNs, xrootd first, unless resolve_archives is false', async () => {
    const { scope, rse } = await setUp();
    expectStatus(
      await putIntoArchive(scope, 'logs.zip', [
        { scope, name: 'new.log', bytes: 5 },
        { scope, name: 'old.log' },
      ]),
      201,
    );
    const [archive] = await listReplicas(server, { dids: [{ scope, name: 'logs.zip' }], schemes: ['root', 'https'] });
    const [rootPfn, httpsPfn] = Object.keys(archive!.pfns);
    expect(rootPfn).to.match(/^root:\/\/xrd\.example\.org:1094\/data\//);
    expect(httpsPfn).to.match(/^https:\/\/web\.example\.org:443\/data\//);

    const [constituent] = await listReplicas(server, { dids: [{ scope, name: 'new.log' }], schemes: ['https'] });
    // `root` comes with archives whatever the schemes, and xrootd reads inside the archive itself.
    expect(constituent!.pfns).to.deep.equal({
      [`${rootPfn}?xrdcl.unzip=new.log`]: {
        rse_id: archive!.pfns[rootPfn!]!.rse_id,
        rse,
        type: 'DISK',
        volatile: false,
        domain: 'zip',
        priority: 1,
        client_extract: false,
      },
      [`${httpsPfn}?xrdcl.unzip=new.log`]: {
        rse_id: archive!.pfns[rootPfn!]!.rse_id,
        rse,
        type: 'DISK',
        volatile: false,
        domain: 'zip',
        priority: 2,
        client_extract: true,
      },
    });
    expect(constituent).to.deep.include({ bytes: 5, states: { [rse]: 'AVAILABLE' } });

    // A constituent with a replica of its own: its own PFNs first, then those inside the archive.
    const [own] = await listReplicas(server, { dids: [{ scope, name: 'old.log' }] });
    const domains = Object.values(own!.pfns as Record<string, { domain: string }>).map((entry) => entry.domain);
    expect(domains).to.deep.equal(['wan', 'zip']);

    const [unresolved] = await listReplicas(server, { dids: [{ scope, name: 'new.log' }], resolve_archives: false });
    expect(unresolved!.pfns).to.deep.equal({});
  });

  it('refuses what cannot go into an archive, and what is no archive', async () => {
    const { scope } = await setUp();
    expectError(
      await putIntoArchive(scope, 'old.log', [{ scope, name: 'x.log', bytes: 1 }]),
      409,
      'UnsupportedOperation',
      /is a file/,
    );
    expectError(await putIntoArchive(scope, 'logs.zip', [{ scope, name: 'x.log' }]), 400, 'InvalidObject', /'bytes'/);
    expectError(
      await putIntoArchive(scope, 'logs.zip', [{ scope, name: 'ds' }]),
      409,
      'UnsupportedOperation',
      /of type DATASET cannot be added to an archive/,
    );
    expectStatus(await putIntoArchive(scope, 'logs.zip', [{ scope, name: 'old.log' }]), 201);
    expectError(
      await putIntoArchive(scope, 'logs.zip', [{ scope, name: 'old.log' }]),
      409,
      'FileAlreadyExists',
      /already in the archive/,
    );
    expectError(
      await server.root('POST', '/dids/attachments', {
        body: {
          attachments: [
            { scope, name: 'logs.zip', dids: [{ scope, name: 'y.log', bytes: 1 }] },
            { scope, name: 'ds', dids: [{ scope, name: 'old.log' }] },
          ],
        },
      }),
      409,
      'UnsupportedOperation',
      /archives and to collections in the same call/,
    );
    // Nothing of a refused call was written.
    expect(expectStatus(await server.root('GET', `/archives/${scope}/logs.zip/files`), 200).lines()).to.have.length(1);
    expectError(await server.root('GET', path(scope, 'y.log', '/meta')), 404, 'DataIdentifierNotFound');
    // As Rucio: the content of something that is no archive is empty, not an error.
    expect(expectStatus(await server.root('GET', `/archives/${scope}/nothing.zip/files`), 200).text).to.equal('');
  });
});
