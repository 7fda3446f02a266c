import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, type TestServer } from '../support/server.ts';

/**
 * What the browser tests share: the accessibility check (axe-core, from node_modules, evaluated in
 * the page: the console's CSP admits no injected script tag, evaluation is not one), the
 * screenshot of a page with its checks, and the world they log into (accounts, two posix RSEs, a
 * dataset with a real file).
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] };

/**
 * Runs axe-core over the page as it is now (WCAG 2.x A and AA rules and best practices) and fails
 * on any serious or critical violation, naming each with the elements concerned.
 */
export const expectAccessible = async (page: Page, name: string): Promise<void> => {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(`
    window.axe.run(document, { resultTypes: ['violations'] }).then((result) =>
      result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.slice(0, 5).map((node) => ({ target: node.target })),
      })),
    )`);
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(
    serious.map(
      (violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes)}`,
    ),
    `accessibility of ${name}`,
  ).to.deep.equal([]);
};

/**
 * Checks a page (every control labelled, no serious accessibility violation) and saves its
 * picture from the top (the whole page with `whole`), nothing focused.
 */
export const checkAndShoot = async (page: Page, directory: string, name: string, whole = false): Promise<void> => {
  const unlabelled = await page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
    .filter((control) => !control.hidden && control.type !== 'hidden' && control.labels.length === 0 && !control.getAttribute('aria-label'))
    .map((control) => control.id || control.outerHTML)`);
  expect(unlabelled, `controls without a label on ${name}`).to.deep.equal([]);
  await expectAccessible(page, name);
  await page.evaluate('document.activeElement?.blur(); window.scrollTo(0, 0)');
  await page.screenshot({ path: join(directory, `${name}.png`), fullPage: whole });
};

/** A USER account with a userpass login, the owner of a scope. */
export const newUserWithScope = async (server: TestServer, scope: string, account: string) => {
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
export const posixWorld = async (
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
  return { pfn: pfns[lfn]! };
};
