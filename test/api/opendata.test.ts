import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { newScope } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { protocol, rseWithProtocols } from './replicaSupport.ts';

type Entry = Record<string, unknown> & { scope: string; name: string; state: string };
type Listing = { dids: Entry[]; offset: number; total: number };

/**
 * The open data catalogue over HTTP (Rucio 39's opendata and opendata_public endpoints): what is
 * registered, updated, listed, refused and published.
 */
describe('API: open data', function () {
  this.timeout(30_000);
  let server: TestServer;
  let scope: string;
  before(async () => {
    server = await startTestServer();
    scope = await newScope(server);
  });
  after(async () => server.stop());

  const entryPath = (name: string, prefix = '/opendata/dids') => `${prefix}/${scope}/${name}`;
  /** A new dataset (closed unless told), registered as open data when asked. */
  const dataset = async (options: { closed?: boolean; registered?: boolean } = {}) => {
    const name = uniqueName('ds');
    expectStatus(await server.root('POST', `/dids/${scope}/${name}`, { body: { type: 'DATASET' } }), 201);
    if (options.closed ?? true)
      expectStatus(await server.root('PUT', `/dids/${scope}/${name}/status`, { body: { open: false } }), 200);
    if (options.registered ?? true) expectStatus(await server.root('POST', entryPath(name)), 201);
    return name;
  };
  const update = (name: string, body: object, token = server.rootToken) =>
    server.call('PUT', entryPath(name), { body, token });
  const get = async (name: string, query = '') =>
    expectStatus(await server.root('GET', `${entryPath(name)}${query}`), 200).json<Entry>();
  const publicNames = async (query = '') =>
    expectStatus(await server.call('GET', `/opendata/public/dids${query}`), 200)
      .json<Listing>()
      .dids.map((entry) => entry.name);
  const head = () => server.runtime.services.commands.eventStore.headPosition();

  describe('POST /opendata/dids/{scope}/{name}', () => {
    it('registers an existing DID as a DRAFT: 201 with an empty JSON body, then the entry in Rucio’s shape', async () => {
      const name = await dataset({ registered: false });
      const response = expectStatus(await server.root('POST', entryPath(name)), 201);
      expect(response.text).to.equal('');
      expect(response.headers['content-type']).to.equal('application/json');
      const entry = await get(name);
      expect(entry).to.deep.include({ scope, name, state: 'DRAFT', doi: null, record_id: null, rule: null });
      expect(entry.created_at).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
      expect(entry).not.to.have.any.keys('meta', 'files');
    });

    it('refuses a DID that does not exist (DataIdentifierNotFound) and a second registration (409), writing nothing', async () => {
      const name = await dataset();
      const before = await head();
      expectError(await server.root('POST', entryPath(uniqueName('ghost'))), 404, 'DataIdentifierNotFound');
      expectError(await server.root('POST', entryPath(name)), 409, 'OpenDataDataIdentifierAlreadyExists');
      expect(await head()).to.equal(before);
    });

    it('is for admins and the owner of the scope: another account is refused, the owner is not', async () => {
      const owner = await server.createUser();
      const ownScope = await newScope(server, owner.account);
      const stranger = await server.createUser();
      const name = uniqueName('ds');
      expectStatus(await server.root('POST', `/dids/${ownScope}/${name}`, { body: { type: 'DATASET' } }), 201);
      const path = `/opendata/dids/${ownScope}/${name}`;
      expectError(await server.call('POST', path, { token: stranger.token }), 401, 'AccessDenied');
      expectStatus(await server.call('POST', path, { token: owner.token }), 201);
      // Reading needs only a token.
      expectStatus(await server.call('GET', path, { token: stranger.token }), 200);
    });
  });

  describe('PUT /opendata/dids/{scope}/{name}: states', () => {
    it('makes a closed DRAFT PUBLIC and answers the states before and after', async () => {
      const name = await dataset();
      const response = expectStatus(await update(name, { state: 'public' }), 200);
      expect(response.json()).to.deep.equal({ scope, name, state_old: 'DRAFT', state_new: 'PUBLIC' });
      expect((await get(name)).state).to.equal('PUBLIC');
    });

    it('refuses PUBLIC while the DID is open (OpenDataInvalidStateUpdate)', async () => {
      const name = await dataset({ closed: false });
      expectError(await update(name, { state: 'PUBLIC' }), 400, 'OpenDataInvalidStateUpdate', /closed/);
      expect((await get(name)).state).to.equal('DRAFT');
    });

    it('refuses SUSPENDED from DRAFT and DRAFT after PUBLIC, and suspends a PUBLIC entry', async () => {
      const name = await dataset();
      expectError(await update(name, { state: 'suspended' }), 400, 'OpenDataInvalidStateUpdate');
      expectStatus(await update(name, { state: 'public' }), 200);
      expectError(await update(name, { state: 'draft' }), 400, 'OpenDataInvalidStateUpdate');
      expectStatus(await update(name, { state: 'suspended' }), 200);
      expect((await get(name)).state).to.equal('SUSPENDED');
    });

    it('refuses an unknown state (OpenDataError), an entry not in the catalogue (404) and an empty update (400)', async () => {
      const name = await dataset();
      expectError(await update(name, { state: 'published' }), 400, 'OpenDataError', /draft, public, suspended/);
      expectError(await update(uniqueName('ghost'), { state: 'public' }), 404, 'OpenDataDataIdentifierNotFound');
      expectError(await update(name, { meta: {}, record_id: 0 }), 400, 'InputValidationError', /Nothing to update/);
    });
  });

  describe('PUT /opendata/dids/{scope}/{name}: metadata, DOI and record id', () => {
    it('sets them together, answers what it set, and the switches of GET show or hide them', async () => {
      const name = await dataset();
      const doi = `10.1234/${uniqueName('doi')}`;
      const response = expectStatus(await update(name, { meta: { title: 'Run 2' }, doi, record_id: '77' }), 200);
      expect(response.json()).to.deep.equal({
        scope,
        name,
        meta_new: { title: 'Run 2' },
        doi_new: doi,
        doi_old: null,
        record_id_new: 77,
        record_id_old: null,
      });
      expect(await get(name, '?meta=1')).to.deep.include({ doi, record_id: 77, meta: { title: 'Run 2' } });
      expect(await get(name, '?doi=0&record_id=0')).not.to.have.any.keys('doi', 'record_id', 'meta');
    });

    it('takes the metadata as JSON text too, and refuses text that is not a JSON object', async () => {
      const name = await dataset();
      expectStatus(await update(name, { meta: '{"year": 2024}' }), 200);
      expect((await get(name, '?meta=1')).meta).to.deep.equal({ year: 2024 });
      expectError(await update(name, { meta: '{"year"' }), 400, 'ValueError', /Invalid JSON/);
      expectError(await update(name, { meta: '[1]' }), 400, 'InputValidationError');
    });

    it('refuses a malformed DOI and record id, and changes nothing else of the update', async () => {
      const name = await dataset();
      expectError(await update(name, { state: 'public', doi: '11.1234/x' }), 400, 'InputValidationError', /not a DOI/);
      expectError(await update(name, { record_id: 'seven' }), 400, 'ValueError');
      expectError(await update(name, { state: 'public', record_id: -1 }), 400, 'InputValidationError');
      expect((await get(name)).state).to.equal('DRAFT');
    });

    it('gives a DOI to one entry only, whatever its case, refusing the whole update of another (OpenDataDuplicateDOI)', async () => {
      const [first, second] = [await dataset(), await dataset()];
      const doi = `10.5555/${uniqueName('Doi')}`;
      expectStatus(await update(first, { doi }), 200);
      const before = await head();
      expectError(await update(second, { state: 'public', doi: doi.toLowerCase() }), 400, 'OpenDataDuplicateDOI');
      expect(await head()).to.equal(before);
      expect((await get(second)).state).to.equal('DRAFT');
    });

    it('frees a DOI and a record id when their entry takes others', async () => {
      const [first, second] = [await dataset(), await dataset()];
      const [doi, recordId] = [`10.5555/${uniqueName('doi')}`, Date.now()];
      expectStatus(await update(first, { doi, record_id: recordId }), 200);
      expectError(await update(second, { record_id: recordId }), 400, 'OpenDataDuplicateRecordID');
      expectStatus(await update(first, { doi: `${doi}.v2`, record_id: recordId + 1 }), 200);
      expectStatus(await update(second, { doi, record_id: recordId }), 200);
      expect(await get(second)).to.deep.include({ doi, record_id: recordId });
    });

    it('lets one of two entries asking for the same DOI at once have it', async () => {
      const names = [await dataset(), await dataset(), await dataset()];
      const doi = `10.7777/${uniqueName('race')}`;
      const statuses = (await Promise.all(names.map((name) => update(name, { doi })))).map(
        (response) => response.status,
      );
      expect(statuses.sort()).to.deep.equal([200, 400, 400]);
      const holders = (await Promise.all(names.map((name) => get(name)))).filter((entry) => entry.doi === doi);
      expect(holders).to.have.length(1);
    });

    it('is for admins and the owner of the scope', async () => {
      const name = await dataset();
      const user = await server.createUser();
      expectError(await update(name, { state: 'public' }, user.token), 401, 'AccessDenied');
    });
  });

  describe('DELETE /opendata/dids/{scope}/{name}', () => {
    it('removes a DRAFT (204) and frees its DOI; a PUBLIC entry is refused (OpenDataInvalidState)', async () => {
      const [draft, published] = [await dataset(), await dataset()];
      const doi = `10.4242/${uniqueName('doi')}`;
      expectStatus(await update(draft, { doi }), 200);
      expectStatus(await update(published, { state: 'public' }), 200);
      expectError(await server.root('DELETE', entryPath(published)), 400, 'OpenDataInvalidState');
      const response = expectStatus(await server.root('DELETE', entryPath(draft)), 204);
      expect(response.text).to.equal('');
      expectError(await server.root('GET', entryPath(draft)), 404, 'OpenDataDataIdentifierNotFound');
      expectError(await server.root('DELETE', entryPath(draft)), 404, 'OpenDataDataIdentifierNotFound');
      expectStatus(await update(published, { doi }), 200);
      // The DID itself stays, and may be registered again.
      expectStatus(await server.root('POST', entryPath(draft)), 201);
    });
  });

  describe('listings', () => {
    it('lists entries by last update with their state, filtered by state, paged by limit and offset', async () => {
      const names = [await dataset(), await dataset(), await dataset()];
      expectStatus(await update(names[0]!, { state: 'public' }), 200);
      const all = expectStatus(await server.root('GET', '/opendata/dids'), 200).json<Listing>();
      const mine = all.dids.filter((entry) => names.includes(entry.name)).map((entry) => [entry.name, entry.state]);
      expect(mine).to.deep.equal([
        [names[1], 'DRAFT'],
        [names[2], 'DRAFT'],
        [names[0], 'PUBLIC'],
      ]);
      expect(all.total).to.equal(all.dids.length);
      const drafts = expectStatus(await server.root('GET', '/opendata/dids?state=DRAFT'), 200).json<Listing>();
      expect(drafts.dids.every((entry) => entry.state === 'DRAFT')).to.equal(true);
      const page = expectStatus(await server.root('GET', '/opendata/dids?limit=2&offset=1'), 200).json<Listing>();
      expect(page).to.deep.include({ offset: 1, total: 2 });
      expect(page.dids.map((entry) => entry.name)).to.deep.equal(all.dids.slice(1, 3).map((entry) => entry.name));
      expect(expectStatus(await server.root('GET', '/opendata/dids?limit=0'), 200).json()).to.deep.equal({
        offset: 0,
        dids: [],
        total: 0,
      });
      expectError(await server.root('GET', '/opendata/dids?state=gone'), 400, 'OpenDataError');
    });

    it('shows PUBLIC entries only, without a token, and one of them by name', async () => {
      const [published, draft, suspended] = [await dataset(), await dataset(), await dataset()];
      for (const name of [published, suspended]) expectStatus(await update(name, { state: 'public' }), 200);
      expectStatus(await update(suspended, { state: 'suspended' }), 200);
      const names = await publicNames();
      expect(names).to.include(published);
      expect(names).not.to.include.members([draft, suspended]);
      const entry = expectStatus(await server.call('GET', entryPath(published, '/opendata/public/dids')), 200).json();
      expect(entry).to.deep.include({ name: published, state: 'PUBLIC' });
      for (const hidden of [draft, suspended])
        expectError(
          await server.call('GET', entryPath(hidden, '/opendata/public/dids')),
          404,
          'OpenDataDataIdentifierNotFound',
        );
      // The token routes stay closed without one.
      expectError(await server.call('GET', '/opendata/dids'), 400, 'ValueError', /Token must be set/);
    });
  });

  describe('files', () => {
    it('needs opendata.rse_expression, then lists each file with its disk PFNs there and a summary', async () => {
      const [{ rse }, { rse: elsewhere }] = [
        await rseWithProtocols(server, [{ root: protocol('root', `${uniqueName('od')}.example.org`) }]),
        await rseWithProtocols(server, [{ root: protocol('root', `${uniqueName('od')}.example.org`) }]),
      ];
      const name = uniqueName('ds');
      const files = [
        { scope, name: `${uniqueName('a')}.root`, bytes: 10 },
        { scope, name: `${uniqueName('b')}.txt`, bytes: 5 },
      ];
      expectStatus(
        await server.root('POST', `/dids/${scope}/${name}`, { body: { type: 'DATASET', rse, dids: files } }),
        201,
      );
      const away = { scope, name: `${uniqueName('c')}.dat`, bytes: 1 };
      expectStatus(
        await server.root('POST', `/dids/${scope}/${name}/dids`, { body: { rse: elsewhere, dids: [away] } }),
        201,
      );
      expectStatus(await server.root('POST', entryPath(name)), 201);
      expectError(await server.root('GET', `${entryPath(name)}?files=1`), 400, 'ConfigurationError', /rse_expression/);
      expectStatus(await server.root('PUT', `/config/opendata/rse_expression/${rse}`), 201);
      const entry = (await get(name, '?files=1')) as Entry & {
        files: { name: string; bytes: number; uris: string[] }[];
        files_summary: Record<string, unknown>;
      };
      expect(entry.files.map((file) => [file.name, file.bytes, file.uris.length]).sort()).to.deep.equal(
        [
          [files[0]!.name, 10, 1],
          [files[1]!.name, 5, 1],
          [away.name, 1, 0],
        ].sort(),
      );
      const root = entry.files.find((file) => file.name === files[0]!.name)!;
      expect(root.uris[0]).to.match(new RegExp(`^root://.*${files[0]!.name.replaceAll('.', '\\.')}$`));
      expect(entry.files_summary).to.deep.include({ length: 3, bytes: 16, replicas_missing: 1 });
      expect(entry.files_summary.extensions).to.have.members(['root', 'txt']);
      expectStatus(
        await server.root('PUT', `/config/opendata/rse_expression/${uniqueName('NONE').toUpperCase()}`),
        201,
      );
      expectError(await server.root('GET', `${entryPath(name)}?files=1`), 400, 'InvalidRSEExpression');
      expectStatus(await server.root('DELETE', '/config/opendata/rse_expression'), 200);
    });
  });

  describe('the open data rule (opendata.rule_enable)', () => {
    it('is made when an entry turns PUBLIC, owned by root on opendata.rule_rse_expression, and found again after', async () => {
      const { rse } = await rseWithProtocols(server, [{ root: protocol('root', `${uniqueName('od')}.example.org`) }]);
      const owner = await server.createUser();
      const ownScope = await newScope(server, owner.account);
      const name = uniqueName('ds');
      const files = [{ scope: ownScope, name: uniqueName('f'), bytes: 3 }];
      expectStatus(
        await server.root('POST', `/dids/${ownScope}/${name}`, { body: { type: 'DATASET', rse, dids: files } }),
        201,
      );
      expectStatus(await server.root('PUT', `/dids/${ownScope}/${name}/status`, { body: { open: false } }), 200);
      const path = `/opendata/dids/${ownScope}/${name}`;
      expectStatus(await server.call('POST', path, { token: owner.token }), 201);
      for (const [option, value] of [
        ['rule_enable', 'True'],
        ['rule_rse_expression', rse],
      ])
        expectStatus(await server.root('PUT', `/config/opendata/${option}/${value}`), 201);
      try {
        // The scope's owner may not add rules for root: the configuration's rule is made all the same.
        const made = expectStatus(
          await server.call('PUT', path, { body: { state: 'public' }, token: owner.token }),
          200,
        ).json<{ rule: string; comments: string }>();
        expect(made).to.deep.include({ state_new: 'PUBLIC', comments: 'Replication rule created' });
        const rule = expectStatus(await server.root('GET', `/rules/${made.rule}`), 200).json();
        expect(rule).to.include({ account: 'root', rse_expression: rse, grouping: 'DATASET', state: 'OK' });
        expect(expectStatus(await server.root('GET', path), 200).json()).to.include({ rule: made.rule });
        expectStatus(await server.call('PUT', path, { body: { state: 'suspended' }, token: owner.token }), 200);
        const again = expectStatus(
          await server.call('PUT', path, { body: { state: 'public' }, token: owner.token }),
          200,
        ).json();
        expect(again).to.deep.include({ rule: made.rule, comments: 'Replication rule already exists' });
      } finally {
        for (const option of ['rule_enable', 'rule_rse_expression'])
          expectStatus(await server.root('DELETE', `/config/opendata/${option}`), 200);
      }
    });
  });

  it('tells the DID’s history what happened to its entry (the audit)', async () => {
    const name = await dataset();
    expectStatus(await update(name, { state: 'public', doi: `10.9999/${uniqueName('doi')}` }), 200);
    const lines = expectStatus(await server.root('GET', `/audit/dids/${scope}/${name}/events`), 200).lines<{
      type: string;
    }>();
    expect(lines.map((line) => line.type)).to.include.members([
      'OpenDataDidAdded',
      'OpenDataDidStateChanged',
      'OpenDataDidDoiSet',
      'OpenDataIdentifierClaimed',
    ]);
  });
});
