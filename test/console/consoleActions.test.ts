import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { uniqueName } from '../support/events.ts';
import { bodyEnum, bodyProperties, enumValues, queryEnum, querySchema } from '../support/openApiEnums.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { browserMissing, launchBrowser } from './browser.ts';
import { checkAndShoot, newUserWithScope, posixWorld } from './consolePages.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * Issue 32: what Rucio's users and admins do every day, from the browser. One server (without
 * workers: the actions are the API's, their effects read back) and one browser; a plain account
 * first (what it is offered and what not, a file's download links and the rules that keep it
 * through its dataset), then root: the rule list and its approvals, a rule's actions, the
 * subscription editor, scopes, storage elements, accounts and quotas, bad and suspicious
 * replicas, lifetime exceptions, the 404 pages, and the layout at 800 px. Every page is checked
 * with axe-core and pictured (DMS_CONSOLE_SCREENSHOTS keeps the pictures, as for console.test.ts).
 */
describe('Console: the daily actions of users and admins in a real browser', function () {
  this.timeout(90_000);
  let temp: ReturnType<typeof makeTempDir>;
  let server: TestServer;
  let browser: BrowserContext;
  let page: Page;
  let screenshots: string;
  let pageErrors: string[] = [];
  const readable = process.env.DMS_CONSOLE_SCREENSHOTS !== undefined;
  const scope = readable ? 'user.jdoe' : uniqueName('user.act').toLowerCase().slice(0, 25);
  const dataset = readable ? 'run2026a' : uniqueName('run2026');
  const fileName = 'hello.txt';
  const rseA = readable ? 'POSIX_A' : uniqueName('POSIX_A').toUpperCase().slice(0, 30);
  const rseB = readable ? 'POSIX_B' : uniqueName('POSIX_B').toUpperCase().slice(0, 30);
  let user: { account: string; password: string };
  let pfn: string;
  let userToken: string;

  const shot = (name: string, whole = false) => checkAndShoot(page, screenshots, name, whole);
  const go = async (hash: string) => {
    await page.goto(`${server.url}/console/${hash}`);
  };
  const logIn = async (username: string, password: string) => {
    await page.goto(`${server.url}/console/#/login`);
    await page.locator('#login-username').fill(username);
    await page.locator('#login-password').fill(password);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.locator('#search-scope').waitFor();
  };
  const addRule = async (body: object, token?: string) =>
    (
      JSON.parse(
        expectStatus(await server.call('POST', '/rules/', { body, token: token ?? server.rootToken }), 201).text,
      ) as string[]
    )[0]!;

  const optionValues = (selector: string) =>
    page.locator(selector).evaluateAll((elements) => elements.map((element) => element.getAttribute('value')));

  before(async function () {
    const missing = browserMissing();
    if (missing) {
      skipBecause(this, `the browser tests: ${missing}`);
    }
    this.timeout(60_000);
    temp = makeTempDir('dms-console-actions-');
    screenshots = process.env.DMS_CONSOLE_SCREENSHOTS ?? join(temp.path, 'screenshots');
    mkdirSync(screenshots, { recursive: true });
    server = await startTestServer();
    user = await newUserWithScope(server, scope, readable ? 'jdoe' : uniqueName('act').toLowerCase().slice(0, 25));
    ({ pfn } = await posixWorld(server, temp.path, { scope, dataset, fileName, rseA, rseB, account: user.account }));
    const login = await server.call('GET', '/auth/userpass', {
      headers: { 'X-Svc-Username': user.account, 'X-Svc-Password': user.password },
    });
    userToken = String(login.headers['x-svc-auth-token']);
    browser = await launchBrowser(join(temp.path, 'chromium-profile'));
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterEach(function () {
    const errors = pageErrors;
    pageErrors = [];
    if (this.currentTest?.state === 'passed') expect(errors, 'errors in the page').to.deep.equal([]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    temp?.dispose();
  });

  it('shows a plain account a file’s download links and the rules that keep it through its dataset, and offers it no change it may not make', async () => {
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: rseB });
    await logIn(user.account, user.password);
    await go(`#/did/${encodeURIComponent(scope)}/${encodeURIComponent(fileName)}`);
    // The dataset's rule locks the file: the file's page says so.
    await page.locator('#did-rules tr', { hasText: ruleId }).waitFor();
    expect(await page.locator('#did-rules').innerText()).to.include(`${scope}:${dataset}`);
    expect(await page.locator('#did-download').getAttribute('href')).to.equal(
      `/redirect/${encodeURIComponent(scope)}/${encodeURIComponent(fileName)}`,
    );
    // The breadcrumb keeps the scope's case; the owner of the scope is offered its history.
    expect(await page.locator('.eyebrow a.keep-case').innerText()).to.equal(scope);
    await page.getByRole('link', { name: 'History' }).waitFor();
    await shot('10-file');
    await page.getByRole('link', { name: ruleId }).click();
    await page.locator('#rule-state').waitFor();
    // Rucio's generic policy: changing or deleting a rule is for admins.
    expect(await page.locator('#rule-actions button').count()).to.equal(0);
    expect(await page.getByRole('link', { name: 'History and past states' }).count()).to.equal(0);
  });

  it('lists every rule from the navigation and filters them by activity', async () => {
    for (let index = 0; index < 3; index += 1) {
      const name = `extra${index}`;
      expectStatus(await server.root('POST', `/dids/${scope}/${name}`, { body: { type: 'DATASET' } }), 201);
      await addRule({ dids: [{ scope, name }], copies: 1, rse_expression: rseB, activity: 'Express' });
    }
    await page.getByRole('link', { name: 'Rules', exact: true }).click();
    await page.locator('#rules-activity').selectOption('Express');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('#rules h2', { hasText: 'Rules 1–3 (the last)' }).waitFor();
    expect(await page.locator('#rules tbody tr').count()).to.equal(3);
    expect(await page.locator('#nav [aria-current=page]').innerText()).to.equal('Rules');
    await shot('11-rules', true);
  });

  it('offers in the rule filters and the wizard the values /openapi.json lists, whatever they are', async () => {
    const served: unknown = expectStatus(await server.call('GET', '/openapi.json'), 200).json();
    const ruleBody = (document: unknown) => bodyProperties(document, '/rules/', 'post');
    const stateQuery = (document: unknown) => querySchema(document, '/console/rules', 'get', 'state');
    /** The rule filters' and the wizard's choices, from a fresh page load (the document is read once per load). */
    const offered = async () => {
      await go('#/rules');
      await page.reload();
      await page.locator('#rules-state').waitFor();
      const states = await optionValues('#rules-state option:not([value=""])');
      const activities = await optionValues('#rules-activity option:not([value=""])');
      await go('#/rules/new');
      await page.locator('#rule-dids').waitFor();
      return { states, activities, groupings: await optionValues('input[name=grouping]') };
    };

    expect(await offered()).to.deep.equal({
      states: enumValues(stateQuery(served)),
      activities: bodyEnum(served, '/rules/', 'post', 'activity'),
      groupings: bodyEnum(served, '/rules/', 'post', 'grouping'),
    });
    expect(await page.locator('input[name=grouping]:checked').getAttribute('value')).to.equal('DATASET');

    // Another document, other choices: the console keeps no list of its own.
    const changed = structuredClone(served);
    ruleBody(changed).activity = { type: 'string', enum: ['Only this one'] };
    ruleBody(changed).grouping = { anyOf: [{ type: 'string', enum: ['NONE', 'ALL'] }, { type: 'null' }] };
    stateQuery(changed).enum = ['STUCK'];
    await page.route('**/openapi.json', (route) => route.fulfill({ json: changed }));
    try {
      expect(await offered()).to.deep.equal({
        states: ['STUCK'],
        activities: ['Only this one'],
        groupings: ['NONE', 'ALL'],
      });
      // Without DATASET, the first grouping the API lists is the one chosen.
      expect(await page.locator('input[name=grouping]:checked').getAttribute('value')).to.equal('NONE');

      // A document without the list: the page says which one it missed, instead of guessing.
      delete ruleBody(changed).activity;
      await go('#/rules');
      await page.reload();
      await page
        .getByRole('alert')
        .filter({ hasText: 'lists no values for POST /rules/ body property activity' })
        .waitFor();
      expect(await page.locator('#rules-state').count()).to.equal(0);
    } finally {
      await page.unroute('**/openapi.json');
      // The next page load reads the served document again (a hash change alone keeps the one read).
      await page.reload();
    }
  });

  it('lets root approve a rule waiting for approval from the list, and deny another on its page', async () => {
    const waiting = [
      await addRule(
        { dids: [{ scope, name: dataset }], copies: 1, rse_expression: rseA, ask_approval: true },
        userToken,
      ),
    ];
    expectStatus(await server.root('POST', `/dids/${scope}/other`, { body: { type: 'DATASET' } }), 201);
    waiting.push(
      await addRule(
        { dids: [{ scope, name: 'other' }], copies: 1, rse_expression: rseA, ask_approval: true },
        userToken,
      ),
    );
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn(ROOT_USERNAME, ROOT_PASSWORD);
    await go('#/rules?state=WAITING_APPROVAL');
    await page.getByRole('button', { name: `Approve rule ${waiting[0]}` }).click();
    await page.locator('dialog').getByRole('button', { name: 'Approve' }).click();
    await page.locator('[role=status]', { hasText: `Rule ${waiting[0]} approved` }).waitFor();
    expect(
      expectStatus(await server.root('GET', `/rules/${waiting[0]}`), 200).json<{ state: string }>().state,
    ).not.to.equal('WAITING_APPROVAL');
    await go(`#/rule/${waiting[1]}`);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.locator('#deny-reason').fill('no room this month');
    await page.locator('dialog').getByRole('button', { name: 'Deny' }).click();
    await page.locator('#rule-outcome', { hasText: 'Denied' }).waitFor();
    expectStatus(await server.root('GET', `/rules/${waiting[1]}`), 404);
  });

  it('extends, boosts and deletes a rule from its page, each confirmed, the result said where it was asked', async () => {
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: `${rseA}|${rseB}` });
    // A rule the repairer should retry: root sets it STUCK, as the finisher would.
    expectStatus(await server.root('PUT', `/rules/${ruleId}`, { body: { options: { state: 'STUCK' } } }), 200);
    await go(`#/rule/${ruleId}`);
    await page.getByRole('button', { name: 'Extend lifetime' }).click();
    await page.locator('#lifetime-choice').selectOption('until');
    await page.locator('#lifetime-until').fill('2099-01-31T12:00:00Z');
    await page.locator('dialog').getByRole('button', { name: 'Set the lifetime' }).click();
    await page.locator('#rule-outcome', { hasText: 'The rule now expires at 2099-01-31T12:00:00Z' }).waitFor();
    await eventually(
      async () =>
        expectStatus(await server.root('GET', `/rules/${ruleId}`), 200)
          .json<{ expires_at: string }>()
          .expires_at.includes('2099'),
      5000,
      'the new expiry',
    );
    await page.getByRole('button', { name: 'Boost' }).click();
    await shot('12-rule-boost');
    await page.locator('dialog').getByRole('button', { name: 'Boost' }).click();
    await page.locator('#rule-outcome', { hasText: 'Boosted' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Delete the rule' }).click();
    await page.locator('#rule-outcome', { hasText: 'Deletion asked' }).waitFor();
    const rule = expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json<{ expires_at: string }>();
    expect(Date.parse(rule.expires_at.replace(' UTC', ' GMT'))).to.be.below(Date.now() + 3_700_000);
    await shot('12-rule-actions', true);
  });

  it('creates a subscription in the editor and shows it with its filter and the rules it made', async () => {
    const name = uniqueName('sub');
    await go('#/subscriptions/new');
    await page.locator('#subscription-name').fill(name);
    await page.locator('#subscription-filter').fill(JSON.stringify({ scope: [scope], pattern: 'nightly.*' }));
    await page
      .locator('#subscription-rules')
      .fill(JSON.stringify([{ copies: 1, rse_expression: rseB, activity: 'User Subscriptions' }]));
    await page.locator('#subscription-comments').fill('nightly copies');
    await shot('13-subscription-editor', true);
    await page.getByRole('button', { name: 'Create the subscription' }).click();
    await page.locator('h1', { hasText: name }).waitFor();
    expect(await page.locator('#subscription-filter').innerText()).to.include('nightly.*');
    await shot('13-subscription', true);
    await page.getByRole('link', { name: 'Subscriptions', exact: true }).click();
    await page.getByRole('link', { name, exact: true }).waitFor();
  });

  it('browses the scopes, and sets an RSE’s attribute, distance and limit on its page', async () => {
    await go('#/scopes');
    await page.getByRole('link', { name: scope, exact: true }).waitFor();
    await go(`#/rse/${rseA}`);
    await page.locator('#attribute-key').fill('tier');
    await page.locator('#attribute-value').fill('1');
    await page.getByRole('button', { name: 'Set attribute' }).click();
    await page.locator('#rse-attributes [role=status]', { hasText: 'Attribute tier set' }).waitFor();
    await page.locator('#distance-destination').selectOption(rseB);
    await page.locator('#distance-value').fill('3');
    await page.getByRole('button', { name: 'Set distance' }).click();
    await page.locator('#rse-distances [role=status]', { hasText: `Distance to ${rseB} set to 3` }).waitFor();
    await page.locator('#limit-value').fill('1000000000');
    await page.getByRole('button', { name: 'Set limit' }).click();
    await page.locator('#rse-limits [role=status]', { hasText: 'MinFreeSpace set' }).waitFor();
    const attributes = expectStatus(await server.root('GET', `/rses/${rseA}/attr/`), 200).json<
      Record<string, unknown>
    >();
    expect(String(attributes.tier)).to.equal('1');
    await shot('14-rse', true);
    await go('#/rses');
    await page.locator('#rse-list tr', { hasText: rseA }).waitFor();
  });

  it('sets a quota for an account on its page, from the accounts list', async () => {
    await go('#/accounts');
    await page.locator('#account-filter').fill(user.account);
    await page.getByRole('link', { name: user.account, exact: true }).click();
    await page.locator('#quota-rse').selectOption(rseA);
    await page.locator('#quota-bytes').fill('2 GB');
    await page.getByRole('button', { name: 'Set quota' }).click();
    await page.locator('#account-quotas [role=status]', { hasText: `Quota on ${rseA} set to 2.0 GB` }).waitFor();
    expect(
      expectStatus(await server.root('GET', `/accounts/${user.account}/limits/local/${rseA}`), 200).json(),
    ).to.deep.equal({ [rseA]: 2_000_000_000 });
    await shot('15-account', true);
    // Root is held to no quota: its page says so instead of limits of 0.
    await go('#/account/me');
    await page.locator('#quota-note', { hasText: 'held to no quota' }).waitFor();
  });

  it('offers root the RSE, account and identity types /openapi.json lists, the feed the acting identities, and the bad-replica and search pages their states and types', async () => {
    const served: unknown = expectStatus(await server.call('GET', '/openapi.json'), 200).json();
    /** Opens `hash` and reads the values of `select`'s `options`. */
    const offered = async (hash: string, select: string, options = 'option') => {
      await go(hash);
      await page.locator(select).waitFor();
      return optionValues(`${select} ${options}`);
    };
    expect(await offered('#/rses', '#rse-new-type')).to.deep.equal(bodyEnum(served, '/rses/{rse}', 'post', 'rse_type'));
    expect(await offered('#/accounts', '#account-new-type')).to.deep.equal(
      bodyEnum(served, '/accounts/{account}', 'post', 'type'),
    );
    expect(await offered(`#/account/${user.account}`, '#identity-type')).to.deep.equal(
      bodyEnum(served, '/accounts/{account}/identities', 'post', 'authtype'),
    );
    expect(await page.locator('#identity-type').inputValue()).to.equal('USERPASS');
    expect(await offered('#/audit', '#feed-identity-type', 'option:not([value=""])')).to.deep.equal(
      queryEnum(served, '/audit/events', 'get', 'identity_type'),
    );
    expect(await offered('#/replicas', '#bad-state')).to.deep.equal(
      queryEnum(served, '/replicas/bad/states', 'get', 'state'),
    );
    expect(await page.locator('#bad-state').inputValue()).to.equal('BAD');
    expect(await offered('#/', '#search-type')).to.deep.equal(
      queryEnum(served, '/dids/{scope}/dids/search', 'get', 'type'),
    );
    expect(await page.locator('#search-type').inputValue()).to.equal('all');
  });

  it('declares a replica suspicious and lists it, and decides a lifetime exception', async () => {
    await go('#/replicas');
    await page.locator('#declare-pfns').fill(pfn);
    await page.locator('#declare-reason').fill('checksum mismatch on read');
    await page.getByRole('button', { name: 'Declare', exact: true }).click();
    await page.locator('#suspicious-replicas tr', { hasText: fileName }).waitFor();
    await shot('16-replicas', true);
    // Exceptions are taken while the lifetime model's cutoff date is ahead, for DIDs whose end of
    // life (here their rule's) comes before it.
    expectStatus(await server.root('PUT', '/config/lifetime_model/cutoff_date/2099-12-31'), 201);
    const kept = 'kept';
    expectStatus(await server.root('POST', `/dids/${scope}/${kept}`, { body: { type: 'DATASET' } }), 201);
    const ruleId = await addRule({ dids: [{ scope, name: kept }], copies: 1, rse_expression: rseB });
    expectStatus(
      await server.root('PUT', `/rules/${ruleId}`, { body: { options: { eol_at: '2030-01-01T00:00:00' } } }),
      200,
    );
    expectStatus(
      await server.call('POST', '/lifetime_exceptions/', {
        token: userToken,
        body: {
          dids: [{ scope, name: kept }],
          comments: 'thesis data',
          // Within the policy's reach: a month from now.
          expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19),
        },
      }),
      201,
    );
    await go('#/exceptions');
    await page.getByRole('button', { name: `Approve the exception for ${scope}:${kept}` }).click();
    await page.locator('dialog').getByRole('button', { name: 'Approve' }).click();
    await page.locator('#exception-list [role=status]', { hasText: 'Approved' }).waitFor();
    expect(await page.locator('#exception-list tr', { hasText: kept }).innerText()).to.include('APPROVED');
    await shot('17-exceptions', true);
  });

  it('answers a page or a DID that does not exist with a 404 page and a way back', async () => {
    await go('#/no/such/page');
    await page.locator('h1', { hasText: 'Nothing here' }).waitFor();
    await shot('18-not-found');
    await go(`#/did/${encodeURIComponent(scope)}/${'x'.repeat(300)}`);
    await page.locator('h1', { hasText: 'Not found' }).waitFor();
    expect(await page.locator('.not-found .alert').innerText()).to.include('DataIdentifierNotFound');
    // A 300-character name stays inside its box.
    const overflow = await page.locator('.not-found .alert').evaluate((box) => box.scrollWidth > box.clientWidth + 1);
    expect(overflow).to.equal(false);
    await page.getByRole('link', { name: 'Find data' }).last().click();
    await page.locator('#search-scope').waitFor();
  });

  it('folds the navigation behind a menu at 800 px, and says where a table scrolls', async () => {
    await page.setViewportSize({ width: 800, height: 900 });
    try {
      await go('#/rules');
      await page.locator('#rules tbody tr').first().waitFor();
      expect(await page.getByRole('link', { name: 'Find data' }).first().isVisible()).to.equal(false);
      await page.getByRole('button', { name: 'Menu' }).click();
      await page.locator('#nav').getByRole('link', { name: 'Find data' }).waitFor();
      expect(await page.locator('#nav').getByRole('link', { name: 'Daemons' }).isVisible()).to.equal(true);
      await shot('19-menu-800');
      await page.keyboard.press('Escape');
      await page.locator('.scroll-hint', { hasText: 'scroll sideways' }).first().waitFor();
      await shot('19-rules-800', true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
