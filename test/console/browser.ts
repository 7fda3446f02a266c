import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium, installed by bin/ensure-chromium.sh before `npm test`. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Flags that keep the browser to itself: no sandbox (tests run as root in CI), no GPU, and none
 * of the background calls a fresh profile makes (first-run pages, component updates, sync, QUIC
 * probes): the tests talk to the loopback server only.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing = (): string | undefined =>
  existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is missing: bin/ensure-chromium.sh installs Debian's chromium as root (apt-get install chromium)`;

const LOOPBACK = /^(https?|wss?):\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?\//;

/**
 * Headless chromium with a fresh profile in `userDataDir`, its requests held to loopback
 * addresses (anything else is aborted, so a test never reaches out).
 */
export const launchBrowser = async (userDataDir: string): Promise<BrowserContext> => {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
  });
  await context.route('**/*', (route) =>
    LOOPBACK.test(route.request().url()) || route.request().url().startsWith('data:')
      ? route.continue()
      : route.abort('blockedbyclient'),
  );
  return context;
};
