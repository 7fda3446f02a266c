import { getJson } from './lib/api.js';
import { errorBox, h, replace } from './lib/dom.js';
import { forget, who } from './lib/session.js';

/**
 * The console's shell: the navigation, the login gate and a router over the URL's hash
 * (`#/did/user.jdoe/dataset1`). Each page is a module loaded when first opened, so the first page
 * loads only the shell, its helpers and itself.
 */

/**
 * @typedef {import('./lib/session.js').Who} Who
 * @typedef {{
 *   main: HTMLElement,
 *   params: string[],
 *   query: URLSearchParams,
 *   signal: AbortSignal,
 *   who: Who,
 *   every: (ms: number, action: () => Promise<boolean | void> | boolean | void) => void,
 *   navigate: (hash: string) => void,
 * }} View
 * @typedef {{ title: string, render: (view: View) => Promise<void> | void }} Page
 * @typedef {{ pattern: RegExp, load: () => Promise<Page>, admin?: boolean, open?: boolean }} Route
 */

/** @type {Route[]} */
const ROUTES = [
  { pattern: /^\/login$/, load: () => import('./pages/login.js'), open: true },
  { pattern: /^\/$/, load: () => import('./pages/search.js') },
  { pattern: /^\/did\/([^/]+)\/(.+)$/, load: () => import('./pages/did.js') },
  { pattern: /^\/rse\/([^/]+)$/, load: () => import('./pages/rse.js') },
  { pattern: /^\/account\/([^/]+)$/, load: () => import('./pages/account.js') },
  { pattern: /^\/rules\/new$/, load: () => import('./pages/ruleWizard.js') },
  { pattern: /^\/rule\/([^/]+)$/, load: () => import('./pages/rule.js') },
  { pattern: /^\/history\/(did|rule|rse|account|subscription)\/(.+)$/, load: () => import('./pages/history.js') },
  { pattern: /^\/audit$/, load: () => import('./pages/feed.js'), admin: true },
  { pattern: /^\/projections$/, load: () => import('./pages/projections.js'), admin: true },
  { pattern: /^\/daemons$/, load: () => import('./pages/daemons.js'), admin: true },
  { pattern: /^\/transfers$/, load: () => import('./pages/transfers.js'), admin: true },
  { pattern: /^\/config$/, load: () => import('./pages/config.js'), admin: true },
];

/** @type {{ hash: string, label: string, admin?: boolean, match: RegExp }[]} */
const NAV = [
  { hash: '#/', label: 'Find data', match: /^\/($|did\/|rse\/)/ },
  { hash: '#/rules/new', label: 'New rule', match: /^\/rules?\// },
  { hash: '#/account/me', label: 'My account', match: /^\/account\// },
  { hash: '#/audit', label: 'Audit', admin: true, match: /^\/(audit|history\/)/ },
  { hash: '#/projections', label: 'Projections', admin: true, match: /^\/projections/ },
  { hash: '#/daemons', label: 'Daemons', admin: true, match: /^\/daemons/ },
  { hash: '#/transfers', label: 'Transfers', admin: true, match: /^\/transfers/ },
  { hash: '#/config', label: 'Configuration', admin: true, match: /^\/config/ },
];

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
const whoBox = /** @type {HTMLElement} */ (document.getElementById('who'));

/** @type {AbortController | undefined} */
let current;

const pathOfHash = () => {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  return { path, query: new URLSearchParams(search) };
};

/** @param {string} hash */
const navigate = (hash) => {
  if (location.hash === hash) void show();
  else location.hash = hash;
};

/** @param {string} path */
const renderChrome = (path) => {
  const identity = who();
  replace(
    nav,
    identity
      ? h(
          'ul',
          null,
          NAV.filter((item) => !item.admin || identity.admin).map((item) =>
            h(
              'li',
              null,
              h('a', { href: item.hash, ...(item.match.test(path) ? { 'aria-current': 'page' } : {}) }, item.label),
            ),
          ),
        )
      : null,
  );
  replace(
    whoBox,
    identity
      ? [
          h(
            'span',
            { class: 'who-name', title: identity.identity ?? '' },
            identity.account,
            identity.admin ? h('span', { class: 'tag' }, identity.root ? 'root' : 'admin') : null,
          ),
          h('button', { type: 'button', class: 'button ghost small', onclick: logout }, 'Log out'),
        ]
      : null,
  );
};

const logout = () => {
  forget();
  navigate('#/login');
};

const show = async () => {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const { path, query } = pathOfHash();
  const identity = who();
  const route = ROUTES.find((candidate) => candidate.pattern.test(path));
  if (!identity && !route?.open) {
    const back = location.hash && location.hash !== '#/login' ? location.hash : '';
    location.replace(`#/login${back ? `?back=${encodeURIComponent(back)}` : ''}`);
    return;
  }
  renderChrome(path);
  if (!route) {
    replace(main, h('h1', null, 'Not found'), h('p', null, 'No page here. ', h('a', { href: '#/' }, 'Find data')));
    return;
  }
  if (route.admin && !identity?.admin) {
    replace(main, h('h1', null, 'For admins'), h('p', null, 'This page is for admin accounts.'));
    return;
  }
  const params = (path.match(route.pattern) ?? []).slice(1).map((value) => decodeURIComponent(value));
  replace(main, h('p', { class: 'muted loading' }, 'Loading…'));
  try {
    const page = await route.load();
    if (controller.signal.aborted) return;
    document.title = `${page.title} · dms console`;
    replace(main);
    await page.render({
      main,
      params,
      query,
      signal: controller.signal,
      who: identity ?? { account: '', identity: null, admin: false, root: false },
      every: (ms, action) => repeat(ms, action, controller.signal),
      navigate,
    });
  } catch (error) {
    if (controller.signal.aborted) return;
    replace(main, h('h1', null, 'Something went wrong'), errorBox(error));
  }
};

/**
 * Runs `action` every `ms` until the page is left or the action answers `false` (what it follows
 * has settled): one run at a time (the next waits for the last to finish), none while the tab is
 * hidden.
 * @param {number} ms
 * @param {() => Promise<boolean | void> | boolean | void} action
 * @param {AbortSignal} signal
 */
const repeat = (ms, action, signal) => {
  const tick = async () => {
    if (signal.aborted) return;
    if (document.visibilityState !== 'hidden') {
      try {
        if ((await action()) === false) return;
      } catch (error) {
        if (!signal.aborted) console.warn('a live update failed', error);
      }
    }
    if (!signal.aborted) setTimeout(tick, ms);
  };
  setTimeout(tick, ms);
};

window.addEventListener('hashchange', () => void show());
window.addEventListener('dms:session-ended', () => {
  const back = location.hash;
  location.replace(`#/login?expired=1&back=${encodeURIComponent(back)}`);
});
document.getElementById('skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

// A tab that was logged in before a reload keeps its session; the server still decides.
if (who()) void getJson('/console/session').catch(() => undefined);
void show();
