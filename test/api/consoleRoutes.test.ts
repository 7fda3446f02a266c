import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { aCollectionOverHttp, ruleOverHttp } from '../support/rules.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 24: what the web console needs from the server besides the Rucio API: its files at
 * /console (no token, a CSP, revalidated), who is logged in, the logins offered, and the admins'
 * views the CLI had alone (daemons, transfers, audit verify, a rule's past state).
 */
describe('API: the console’s files and routes', function () {
  let server: TestServer;
  let user: { account: string; token: string };
  before(async () => {
    server = await startTestServer();
    user = await server.createUser();
  });
  after(async () => server.stop());

  describe('The console’s files', () => {
    it('serves the page without a token, with a CSP that allows only its own files', async () => {
      const page = expectStatus(await server.call('GET', '/console/'), 200);
      expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(page.text).to.include('<script type="module" src="app.js">');
      expect(page.headers['content-security-policy'])
        .to.include("script-src 'self'")
        .and.include("frame-ancestors 'none'");
      expect(page.headers['x-content-type-options']).to.equal('nosniff');
    });

    it('has every load revalidated, answering 304 for a file the browser holds', async () => {
      const first = expectStatus(await server.call('GET', '/console/app.js'), 200);
      expect(first.headers['cache-control']).to.equal('no-cache');
      expect(first.headers['content-type']).to.equal('text/javascript; charset=utf-8');
      const again = await server.call('GET', '/console/app.js', {
        headers: { 'If-None-Match': String(first.headers.etag) },
      });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
    });

    it('redirects /console to /console/, where the page’s relative URLs resolve', async () => {
      const answer = expectStatus(await server.call('GET', '/console?x=1'), 302);
      expect(answer.headers.location).to.equal('/console/?x=1');
    });

    it('leads a browser at the service’s root to the console, and answers its unknown URLs with a 404 page', async () => {
      const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
      const root = expectStatus(await server.call('GET', '/', { headers: { Accept: html } }), 302);
      expect(root.headers.location).to.equal('/console/');
      const page = expectStatus(await server.call('GET', '/no/such/page', { headers: { Accept: html } }), 404);
      expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(page.headers.exceptionclass).to.equal('NotFound');
      expect(page.text).to.include('<h1>Nothing here</h1>').and.include('href="/console/"');
      // Rucio's clients never ask for HTML: they keep Rucio's error format.
      expectError(await server.call('GET', '/', { headers: { Accept: '*/*' } }), 404, 'NotFound');
      expectError(await server.call('GET', '/no/such/page'), 404, 'NotFound');
      expectError(await server.call('GET', '/no/such/page', { headers: { Accept: 'text/html' } }), 404, 'NotFound');
    });

    it('keeps what is not a page, a script, a style or a picture to itself', async () => {
      expectError(await server.call('GET', '/console/tsconfig.json'), 404, 'NotFound');
      expectError(await server.call('GET', '/console/../package.json'), 404, 'NotFound');
    });
  });

  describe('Login and session', () => {
    it('names the logins the server offers a browser', async () => {
      const options = expectStatus(await server.call('GET', '/console/login-options'), 200).json();
      expect(options).to.deep.equal({ userpass: true, x509: false, oidc: [] });
    });

    it('tells root it may see the admins’ pages and act as root', async () => {
      const session = expectStatus(await server.root('GET', '/console/session'), 200).json();
      expect(session).to.include({ account: 'root', admin: true, root: true });
    });

    it('tells a plain account it sees its own pages only', async () => {
      const session = expectStatus(await server.call('GET', '/console/session', { token: user.token }), 200).json();
      expect(session).to.include({ account: user.account, admin: false, root: false });
    });

    it('tells each account what the API lets it do: a plain account may ask for copies and call replicas suspicious, no more', async () => {
      const mine = expectStatus(await server.call('GET', '/console/session', { token: user.token }), 200).json<{
        may: Record<string, boolean>;
      }>();
      const granted = Object.entries(mine.may)
        .filter(([, allowed]) => allowed)
        .map(([action]) => action);
      expect(granted).to.deep.equal(['declareSuspicious']);
      const roots = expectStatus(await server.root('GET', '/console/session'), 200).json<{
        may: Record<string, boolean>;
      }>();
      expect(Object.values(roots.may).every(Boolean), JSON.stringify(roots.may)).to.equal(true);
    });
  });

  describe('The admins’ views', () => {
    it('lists every daemon role with its trigger and queue', async () => {
      const roles = expectStatus(await server.root('GET', '/admin/daemons'), 200).json<
        { role: string; trigger: string; counts: Record<string, number>; last_cycle: unknown }[]
      >();
      const injector = roles.find((role) => role.role === 'judge-injector');
      expect(injector?.trigger).to.include('RuleAdded');
      expect(injector?.counts).to.include.keys('waiting', 'active', 'failed');
      expect(roles.find((role) => role.role === 'conveyor-submitter')?.trigger).to.match(/^every \d+ s/);
    });

    it('gives the transfers’ status with the last hour in twelve 5-minute buckets', async () => {
      const status = expectStatus(await server.root('GET', '/admin/transfers'), 200).json<{
        states: object;
        throughput: { at: string; files_done: number }[];
      }>();
      expect(status.states).to.deep.equal({});
      expect(status.throughput).to.have.length(12);
      expect(status.throughput.every((bucket) => Date.parse(bucket.at) % 300_000 === 0)).to.equal(true);
    });

    it('streams the verification of every hash chain, then the verdict', async () => {
      const lines = expectStatus(await server.root('POST', '/audit/verify'), 200).lines<{
        progress?: { events: number; head: number };
        verdict?: { holds: boolean; events: number; first_break: unknown };
      }>();
      expect(lines[0]?.progress?.events).to.equal(0);
      const verdict = lines[lines.length - 1]?.verdict;
      expect(verdict).to.include({ holds: true, first_break: null });
      expect(verdict?.events).to.equal(lines[0]?.progress?.head);
    });

    for (const [method, path] of [
      ['GET', '/admin/daemons'],
      ['GET', '/admin/transfers'],
      ['POST', '/audit/verify'],
    ] as const) {
      it(`refuses ${method} ${path} to a plain account`, async () => {
        expectError(await server.call(method, path, { token: user.token }), 401, 'AccessDenied');
      });
    }
  });

  describe('A rule as it was', () => {
    it('is absent before its creation and live after it', async () => {
      const rse = uniqueName('CONSOLE_').toUpperCase();
      expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
      const scope = uniqueName('console');
      expectStatus(await server.root('POST', `/accounts/root/scopes/${scope}`), 201);
      const dataset = uniqueName('ds');
      await aCollectionOverHttp(server, scope, dataset);
      const before = (await server.root('GET', '/audit/events?limit=10000')).lines<{ position: number }>().pop()!
        .position;
      const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: rse });
      const then = expectStatus(await server.root('GET', `/audit/rules/${ruleId}/state?as_of=${before}`), 200).json();
      expect(then).to.include({ id: ruleId, status: 'ABSENT', as_of: before, position: null });
      const now = expectStatus(await server.root('GET', `/audit/rules/${ruleId}/state`), 200).json();
      expect(now).to.include({ id: ruleId, status: 'LIVE', state: 'OK', rse_expression: rse, as_of: null });
    });

    it('is 404 for a rule that never was', async () => {
      expectError(await server.root('GET', '/audit/rules/0123456789abcdef0123456789abcdef/state'), 404, 'RuleNotFound');
    });
  });

  describe('Reads the API lacks', () => {
    it('pages the rules of a filter from a cursor, each with its DID’s bytes', async () => {
      const rse = uniqueName('CONSOLE_').toUpperCase();
      expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
      const scope = uniqueName('console');
      expectStatus(await server.root('POST', `/accounts/root/scopes/${scope}`), 201);
      const ids: string[] = [];
      for (const name of ['one', 'two', 'three']) {
        await aCollectionOverHttp(server, scope, name);
        ids.push(await ruleOverHttp(server, { dids: [{ scope, name }], copies: 1, rse_expression: rse }));
      }
      type Page = { rules: { id: string; bytes: number | null; rse_expression: string }[]; next: string | null };
      const first = expectStatus(
        await server.call('GET', `/console/rules?rse_expression=${rse}&limit=2`, { token: user.token }),
        200,
      ).json<Page>();
      expect(first.rules).to.have.length(2);
      // An empty dataset has no bytes yet (null, as list_rules gives them).
      expect(first.rules[0]).to.include({ bytes: null, rse_expression: rse });
      const second = expectStatus(
        await server.call(
          'GET',
          `/console/rules?rse_expression=${rse}&limit=2&after=${encodeURIComponent(first.next!)}`,
          {
            token: user.token,
          },
        ),
        200,
      ).json<Page>();
      expect(second).to.deep.include({ next: null });
      // Newest first is the projection test's (rulePages.test.ts); here every rule comes once.
      expect([...first.rules, ...second.rules].map((rule) => rule.id).sort()).to.deep.equal([...ids].sort());
    });

    it('refuses a bad limit, cursor or state with InvalidValueForKey', async () => {
      for (const query of ['limit=0', 'limit=x', 'after=nonsense', 'state=BLUE'])
        expectError(await server.root('GET', `/console/rules?${query}`), 400, 'InvalidValueForKey');
      expectError(
        await server.root('GET', '/console/rules?state=BLUE'),
        400,
        'InvalidValueForKey',
        /^Unknown rule state: BLUE$/,
      );
    });

    it('takes a state beyond the enum its document lists: in any case, or as Rucio’s letter', async () => {
      for (const state of ['STUCK', 'stuck', 'S', ' OK '])
        expect(expectStatus(await server.root('GET', `/console/rules?state=${encodeURIComponent(state)}`), 200).json())
          .to.have.property('rules')
          .that.is.an('array');
    });

    it('lists the distances from an RSE to every other', async () => {
      const [source, near, far] = ['SRC_', 'NEAR_', 'FAR_'].map((prefix) => uniqueName(prefix).toUpperCase());
      for (const rse of [source, near, far]) expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
      expectStatus(await server.root('POST', `/rses/${source}/distances/${near}`, { body: { distance: 1 } }), 201);
      expectStatus(await server.root('POST', `/rses/${source}/distances/${far}`, { body: { distance: 5 } }), 201);
      expectStatus(await server.root('POST', `/rses/${near}/distances/${far}`, { body: { distance: 2 } }), 201);
      const found = expectStatus(await server.root('GET', `/console/rses/${source}/distances`), 200).json<
        { src_rse: string; dest_rse: string; distance: number }[]
      >();
      expect(found.map((row) => [row.src_rse, row.dest_rse, row.distance]).sort()).to.deep.equal(
        [
          [source, far, 5],
          [source, near, 1],
        ].sort(),
      );
      expectError(await server.root('GET', '/console/rses/NO_SUCH_RSE/distances'), 404, 'RSENotFound');
    });
  });
});
