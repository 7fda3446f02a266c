import { eventually } from '../support/eventually.ts';
import { expect } from 'chai';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { uniqueName } from '../support/events.ts';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { browserMissing, launchBrowser } from './browser.ts';
import { ManualClock } from '../support/clock.ts';
import { ruleAcrossProtocolGap } from '../support/protocolGap.ts';
import { checkAndShoot, newUserWithScope, posixWorld } from './consolePages.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * Issue 24: the web console as its users meet it, in headless chromium against a real server
 * with its workers. One browser and one server for the whole file; the scenarios follow each
 * other as a person would: a plain account logs in, finds a dataset, asks for a copy on another
 * RSE and watches the rule turn OK through a real posix transfer; reads the dataset's history and
 * its state before the rule; then root rebuilds a projection and verifies the event log. Each
 * scenario saves a screenshot in the test's temporary directory (or in DMS_CONSOLE_SCREENSHOTS,
 * kept, for the README's pictures).
 */
describe('Console: the web console in a real browser', function () {
  this.timeout(90_000);
  let temp: ReturnType<typeof makeTempDir>;
  let server: TestServer;
  let browser: BrowserContext;
  let page: Page;
  let screenshots: string;
  let pageErrors: string[] = [];
  // Names are the test's own; for the README's pictures (DMS_CONSOLE_SCREENSHOTS) the server is
  // fresh all the same, and the README's names read better.
  const readable = process.env.DMS_CONSOLE_SCREENSHOTS !== undefined;
  const scope = readable ? 'user.jdoe' : uniqueName('user.console').toLowerCase().slice(0, 25);
  const dataset = readable ? 'run2026a' : uniqueName('run2026');
  const fileName = 'hello.txt';
  const rseA = readable ? 'POSIX_A' : uniqueName('POSIX_A').toUpperCase().slice(0, 30);
  const rseB = readable ? 'POSIX_B' : uniqueName('POSIX_B').toUpperCase().slice(0, 30);
  let user: { account: string; password: string };
  /** A second between the dataset's creation and the rule's, for its state as of then. */
  let beforeRule: Date;
  // Running, as the daemons that copy the file expect; moved past `beforeRule` before the rule is made.
  const clock = new ManualClock({ running: true });
  let ruleId: string;

  /** The page checked (labels, accessibility) and pictured from its top (the whole page with `whole`). */
  const shot = (name: string, whole = false) => checkAndShoot(page, screenshots, name, whole);

  /** Opens a page of the navigation's "More" menu. */
  const openFromMore = async (label: string) => {
    await page.getByRole('button', { name: 'More' }).click();
    await page.locator('#nav-more').getByRole('link', { name: label, exact: true }).click();
  };

  /** Logs in through the login form and waits for the first page. */
  const logIn = async (username: string, password: string) => {
    await page.goto(`${server.url}/console/`);
    await page.locator('#login-username').fill(username);
    await page.locator('#login-password').fill(password);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.locator('#search-scope').waitFor();
  };

  before(async function () {
    const missing = browserMissing();
    if (missing) {
      skipBecause(this, `the browser tests: ${missing}`);
    }
    this.timeout(60_000);
    temp = makeTempDir('dms-console-');
    screenshots = process.env.DMS_CONSOLE_SCREENSHOTS ?? join(temp.path, 'screenshots');
    mkdirSync(screenshots, { recursive: true });
    server = await startTestServer({ roles: { workers: true }, clock });
    user = await newUserWithScope(server, scope, readable ? 'jdoe' : uniqueName('cons').toLowerCase().slice(0, 25));
    await posixWorld(server, temp.path, { scope, dataset, fileName, rseA, rseB, account: user.account });
    // The rule comes from the wizard after the next whole second: the state as of that second has none.
    beforeRule = new Date(Math.ceil(clock.now() / 1000) * 1000);
    browser = await launchBrowser(join(temp.path, 'chromium-profile'));
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterEach(function () {
    // An error thrown in the page fails the scenario it happened in.
    const errors = pageErrors;
    pageErrors = [];
    if (this.currentTest?.state === 'passed') expect(errors, 'errors in the page').to.deep.equal([]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    temp?.dispose();
  });

  it('logs a plain account in with userpass, the first page under 200 KB of script and no admin pages', async () => {
    let scriptBytes = 0;
    const countScripts = (response: Response) => {
      if (response.request().resourceType() === 'script')
        void response.body().then(
          (body) => (scriptBytes += body.length),
          () => undefined,
        );
    };
    page.on('response', countScripts);
    await page.goto(`${server.url}/console`);
    await page.locator('#login-username').waitFor();
    await page.waitForLoadState('networkidle');
    page.off('response', countScripts);
    expect(page.url()).to.match(/\/console\/#\/login/);
    expect(scriptBytes).to.be.above(0).and.below(200_000);
    console.log(`      first page: ${(scriptBytes / 1000).toFixed(1)} kB of script`);
    await shot('1-login');
    await page.locator('#login-username').fill(user.account);
    await page.locator('#login-password').fill(user.password);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.locator('#search-scope').waitFor();
    const nav = await page.locator('#nav').innerText();
    expect(nav).to.include('Find data').and.include('New rule');
    expect(nav).not.to.include('Projections');
    expect(await page.evaluate('sessionStorage.getItem("dms.token")')).to.be.a('string');
  });

  it('finds the dataset by scope, name pattern and metadata, and shows its replicas and content', async () => {
    await page.locator('#search-scope').fill(scope);
    await page.locator('#search-name').fill('run2026*');
    await page.locator('#search-meta').fill('project=console');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: `${scope}:${dataset}`, exact: true }).click();
    await page.locator('h1', { hasText: `${scope}:${dataset}` }).waitFor();
    await page.locator('#did-replicas tr', { hasText: rseA }).waitFor();
    expect(await page.locator('#did-replicas').innerText()).to.include('AVAILABLE');
    await page.locator('#content tr', { hasText: `${scope}:${fileName}` }).waitFor();
    await shot('2-find');
  });

  it('asks for a copy on another RSE with the rule wizard and watches the rule turn OK through the posix transfer', async () => {
    await page.getByRole('link', { name: 'Ask for a copy' }).first().click();
    expect(await page.locator('#rule-dids').inputValue()).to.equal(`${scope}:${dataset}`);
    await page.locator('#rule-expression').fill(rseB);
    // The RSEs the expression selects, with the account's free quota there, as it is typed.
    await page.locator('.check tr', { hasText: rseB }).filter({ hasText: '1.0 MB' }).waitFor();
    await page.locator('#rule-comment').fill('a copy for the analysis');
    await shot('3-rule-wizard', true);
    clock.set(Math.max(clock.now(), beforeRule.getTime() + 200));
    await page.getByRole('button', { name: 'Create the rule' }).click();
    await page.waitForURL(/#\/rule\//);
    ruleId = decodeURIComponent(page.url().split('#/rule/')[1]!);
    // The page follows the rule by itself until the transfer has copied the file.
    await page.locator('#rule-state', { hasText: 'OK' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('main').innerText()).to.include('1 OK, 0 replicating, 0 stuck');
    const request = expectStatus(await server.root('GET', `/requests/history/${scope}/${fileName}/${rseB}`), 200).json<{
      state: string;
      transfertool: string;
      dest_url: string;
    }>();
    expect(request).to.include({ state: 'DONE', transfertool: 'posix' });
    expect(readFileSync(request.dest_url.replace('file://localhost', ''), 'utf8')).to.equal('hello, console\n');
    await shot('3-rule-ok');
  });

  it('shows the dataset’s history as a timeline and its state before the rule beside the state now', async () => {
    await page.goto(`${server.url}/console/#/history/did/${encodeURIComponent(scope)}/${encodeURIComponent(dataset)}`);
    // Events in words, the stored event one click away.
    await page.locator('.timeline .event', { hasText: `dataset ${scope}:${dataset} created by root` }).waitFor();
    const ruleEvent = page.locator('.timeline .event', { hasText: `rule ${ruleId} now keeps ${scope}:${dataset}` });
    await ruleEvent.locator('summary').click();
    expect(await ruleEvent.locator('.event-detail').innerText()).to.include('Stored as DidRuleAttached');
    expect(await ruleEvent.locator('pre.json').innerText()).to.include(ruleId);
    // A time as ISO 8601 UTC: the slider moves to the last event before it and says so.
    await page.locator('#as-of-time').fill(`${beforeRule.toISOString().slice(0, 19)}Z`);
    await page.getByRole('button', { name: 'Show' }).click();
    const changedRule = page.locator('#as-of-comparison tr.changed', { hasText: `rules[${ruleId}]` }).first();
    await changedRule.waitFor();
    expect(await changedRule.innerText()).to.include('absent');
    expect(await page.locator('.diff-summary').innerText()).to.match(/\d+ fields? differ/);
    expect(await page.locator('#as-of-slider-text').innerText()).to.match(
      /^as of event #\d+ \(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\)/,
    );
    await shot('4-history', true);
  });

  it('lets root rebuild a projection from the page and shows its progress until the switch-over', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn(ROOT_USERNAME, ROOT_PASSWORD);
    await openFromMore('Projections');
    await page.getByRole('button', { name: 'Rebuild rules' }).click();
    // A rebuild is asked for twice: the dialog says what it costs.
    await page.locator('dialog').getByRole('button', { name: 'Rebuild rules' }).click();
    await page.locator('.switched[data-projection="rules"]').waitFor({ timeout: 60_000 });
    const row = page.locator('#projection-table tr', { hasText: 'rules' }).first();
    expect(await row.innerText()).to.match(/switched to generation \d+/);
    await page.locator('[role=status]', { hasText: 'The rebuild of rules is done' }).waitFor();
    // Each figure under its own heading: the lag is what the checkpoint lacks of the head.
    const headings = await page.locator('#projection-table thead th').allInnerTexts();
    const cells = await row.locator('td').allInnerTexts();
    const figure = (name: string) =>
      Number(cells[headings.findIndex((heading) => heading.trim().toLowerCase() === name)]?.replaceAll(',', ''));
    expect(figure('checkpoint')).to.be.above(0);
    expect(figure('checkpoint') + figure('lag')).to.equal(figure('head'));
    await shot('5-projections', true);
  });

  it('verifies the event log’s hash chains from the audit page, with the verdict', async () => {
    await openFromMore('Audit');
    await page.locator('.timeline .event').first().waitFor();
    // Newest first: the first entry is the latest event.
    const positions = await page
      .locator('.timeline .event')
      .evaluateAll((entries) => entries.map((entry) => Number(entry.getAttribute('data-position'))));
    expect(positions).to.deep.equal([...positions].sort((a, b) => b - a));
    await page.getByRole('button', { name: 'Verify the event log' }).click();
    await page.locator('#verify-verdict', { hasText: 'Every chain holds' }).waitFor();
    await shot('6-audit');
  });

  it('filters the feed by the identity that acted, and opens everything one of its requests caused', async () => {
    await page.locator('#feed-identity-type').selectOption('USERPASS');
    await page.locator('#feed-identity').fill(user.account);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL(/identity=/);
    const entries = page.locator('.timeline .event');
    // The address changes first; until the page has rendered from it, the unfiltered feed shows.
    const shown = async () => ({
      entries: await entries.count(),
      identities: await entries.locator('.event-identity').allInnerTexts(),
    });
    await eventually(
      async () => {
        const now = await shown();
        return (
          now.entries > 0 &&
          now.identities.length === now.entries &&
          now.identities.every((identity) => identity === `${user.account} (userpass)`)
        );
      },
      10_000,
      'the filtered feed',
    );
    const { entries: count, identities } = await shown();
    expect(identities.length).to.equal(count);
    expect(new Set(identities)).to.deep.equal(new Set([`${user.account} (userpass)`]));
    // The rule the wizard asked for: its request's trace lists what it caused.
    const rule = entries.filter({ hasText: ruleId }).first();
    await rule.locator('summary').click();
    await rule.locator('.event-trace').click();
    await page.waitForURL(/trace=[0-9a-f]{32}/);
    // The address changes first; the form shows the filter once the page has rendered from it.
    await eventually(
      async () => /^[0-9a-f]{32}$/.test(await page.locator('#feed-trace').inputValue()),
      10_000,
      'the trace filter shown in the form',
    );
    expect(await page.locator('#feed-trace').inputValue()).to.match(/^[0-9a-f]{32}$/);
    await page.locator('.timeline .event', { hasText: ruleId }).first().waitFor();
    const caused = await page.locator('.timeline .event .event-identity').allInnerTexts();
    expect(new Set(caused)).to.deep.equal(new Set([`${user.account} (userpass)`]));
    await shot('7-audit-trace', true);
  });

  it('edits a configuration option in place and resets it to its default', async () => {
    await openFromMore('Configuration');
    await page.locator('#config-filter').fill('webui');
    const input = page.locator('#config-webui-urls');
    await input.fill('https://webui.example.org');
    await page.getByRole('button', { name: 'Save webui.urls' }).click();
    await page.locator('[role=status]', { hasText: 'Saved webui.urls' }).waitFor();
    expect(expectStatus(await server.root('GET', '/config/webui/urls'), 200).json()).to.equal(
      'https://webui.example.org',
    );
    await shot('9-configuration');
    await page.getByRole('button', { name: 'Reset webui.urls' }).click();
    await page.locator('[role=status]', { hasText: 'back to its default' }).waitFor();
    expectStatus(await server.root('GET', '/config/webui/urls'), 404);
  });

  it('shows the daemons and the transfers of the last hour to root', async () => {
    await openFromMore('Transfers');
    await page.locator('.tile', { hasText: 'Done, last hour' }).waitFor();
    expect(await page.locator('.tile', { hasText: 'Done, last hour' }).innerText()).to.match(/^[1-9]/);
    await shot('7-transfers');
    await openFromMore('Daemons');
    await page.locator('#daemon-table tr', { hasText: 'conveyor-submitter' }).waitFor();
    await shot('8-daemons');
  });

  it('shows the multihop path of a file still replicating on its rule’s page', async () => {
    // No protocol in common between source and destination; the relay speaks both, and holds its
    // copy (the mock tool's delay, on the server's clock, which stays put meanwhile).
    const {
      source,
      hop: relay,
      dest,
      ruleId: relayed,
    } = await ruleAcrossProtocolGap(server, { scope, name: 'relayed.dat', hop: { mock_delay_ms: '3600000' } });
    await page.goto(`${server.url}/console/#/rule/${relayed}`);
    // The page follows a rule that is not OK: the path appears once the submitter has planned it.
    const shown = page.locator('.path', { hasText: `${source.rse} → ${relay.rse} → ${dest.rse}` });
    await shown.waitFor({ timeout: 30_000 });
    expect(await shown.getAttribute('title')).to.equal('multihop path');
    await shot('10-multihop-path');
  });
});
