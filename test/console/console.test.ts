import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { browserMissing, launchBrowser } from './browser.ts';
import { ManualClock } from '../support/clock.ts';

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

  /** The page from its top (the whole page with `whole`), nothing focused. */
  const shot = async (name: string, whole = false) => {
    // Every form control the page shows has a label a screen reader reads.
    const unlabelled = await page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
      .filter((control) => !control.hidden && control.labels.length === 0 && !control.getAttribute('aria-label'))
      .map((control) => control.id || control.outerHTML)`);
    expect(unlabelled, `controls without a label on ${name}`).to.deep.equal([]);
    await page.evaluate('document.activeElement?.blur(); window.scrollTo(0, 0)');
    await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: whole });
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
      console.log(`      browser tests skipped: ${missing}`);
      this.skip();
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
    await page.locator('.timeline .event', { hasText: 'DidCreated' }).waitFor();
    const ruleEvent = page.locator('.timeline .event', { hasText: 'DidRuleAttached' });
    await ruleEvent.locator('summary').click();
    expect(await ruleEvent.locator('pre.json').innerText()).to.include(ruleId);
    await page.locator('#as-of-time').fill(beforeRule.toISOString().slice(0, 19));
    await page.getByRole('button', { name: 'Show' }).click();
    const changedRule = page.locator('#as-of-comparison tr.changed', { hasText: `rules[${ruleId}]` }).first();
    await changedRule.waitFor();
    expect(await changedRule.innerText()).to.include('absent');
    expect(await page.locator('.diff-summary').innerText()).to.match(/\d+ fields? differ/);
    await shot('4-history', true);
  });

  it('lets root rebuild a projection from the page and shows its progress until the switch-over', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn(ROOT_USERNAME, ROOT_PASSWORD);
    expect(await page.locator('#nav').innerText()).to.include('Projections');
    await page.getByRole('link', { name: 'Projections' }).click();
    await page.getByRole('button', { name: 'Rebuild rules' }).click();
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
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.locator('.timeline .event').first().waitFor();
    await page.getByRole('button', { name: 'Verify the event log' }).click();
    await page.locator('#verify-verdict', { hasText: 'Every chain holds' }).waitFor();
    await shot('6-audit');
  });

  it('edits a configuration option in place and resets it to its default', async () => {
    await page.getByRole('link', { name: 'Configuration' }).click();
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
    await page.getByRole('link', { name: 'Transfers' }).click();
    await page.locator('.tile', { hasText: 'Done, last hour' }).waitFor();
    expect(await page.locator('.tile', { hasText: 'Done, last hour' }).innerText()).to.match(/^[1-9]/);
    await shot('7-transfers');
    await page.getByRole('link', { name: 'Daemons' }).click();
    await page.locator('#daemon-table tr', { hasText: 'conveyor-submitter' }).waitFor();
    await shot('8-daemons');
  });
});

/** A USER account with a userpass login, the owner of a scope. */
const newUserWithScope = async (server: TestServer, scope: string, account: string) => {
  const password = `pw-${account}`;
  expectStatus(
    await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: `${account}@example.org` } }),
    201,
  );
  expectStatus(
    await server.root('POST', `/accounts/${account}/identities`, {
      body: { identity: account, authtype: 'USERPASS', email: `${account}@example.org`, password, default: true },
    }),
    201,
  );
  expectStatus(await server.root('POST', `/accounts/${account}/scopes/${scope}`), 201);
  return { account, password };
};

/**
 * The README's posix transfer: two `file` RSEs in temporary directories with a distance between
 * them, a real file on the first registered with its size and adler32 in a dataset with metadata,
 * and a quota for the account on the second.
 */
const posixWorld = async (
  server: TestServer,
  root: string,
  world: { scope: string; dataset: string; fileName: string; rseA: string; rseB: string; account: string },
) => {
  for (const rse of [world.rseA, world.rseB]) {
    expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/file`, {
        body: {
          hostname: 'localhost',
          port: 0,
          prefix: join(root, 'rses', rse),
          impl: 'rucio.rse.protocols.posix.Default',
          domains: {
            lan: { read: 1, write: 1, delete: 1 },
            wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
          },
        },
      }),
      201,
    );
  }
  expectStatus(
    await server.root('POST', `/rses/${world.rseA}/distances/${world.rseB}`, { body: { distance: 1 } }),
    201,
  );
  const lfn = `${world.scope}:${world.fileName}`;
  const pfns = expectStatus(await server.root('GET', `/rses/${world.rseA}/lfns2pfns?lfn=${lfn}`), 200).json<
    Record<string, string>
  >();
  const source = pfns[lfn]!.replace('file://localhost', '');
  mkdirSync(dirname(source), { recursive: true });
  writeFileSync(source, 'hello, console\n');
  const { adler32 } = await checksumFile(source, 'adler32');
  expectStatus(
    await server.root('POST', `/dids/${world.scope}/${world.dataset}`, {
      body: { type: 'DATASET', meta: { project: 'console' } },
    }),
    201,
  );
  expectStatus(
    await server.root('POST', `/dids/${world.scope}/${world.dataset}/dids`, {
      body: { rse: world.rseA, dids: [{ scope: world.scope, name: world.fileName, bytes: 15, adler32 }] },
    }),
    201,
  );
  expectStatus(
    await server.root('POST', `/accountlimits/local/${world.account}/${world.rseB}`, { body: { bytes: 1_000_000 } }),
    201,
  );
  await eventually(async () => (await server.root('GET', `/rses/${world.rseB}`)).status === 200, 5000, 'the RSE');
};
