import { ApiError, getJson } from './lib/api.js';
import { errorBox, h, notFoundPage, replace } from './lib/dom.js';
import { forget, remember, token, who } from './lib/session.js';

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
  { pattern: /^\/scopes$/, load: () => import('./pages/scopes.js') },
  { pattern: /^\/did\/([^/]+)\/(.+)$/, load: () => import('./pages/did.js') },
  { pattern: /^\/rses$/, load: () => import('./pages/rses.js') },
  { pattern: /^\/rse\/([^/]+)$/, load: () => import('./pages/rse.js') },
  { pattern: /^\/accounts$/, load: () => import('./pages/accounts.js') },
  { pattern: /^\/account\/([^/]+)$/, load: () => import('./pages/account.js') },
  { pattern: /^\/rules$/, load: () => import('./pages/rules.js') },
  { pattern: /^\/rules\/new$/, load: () => import('./pages/ruleWizard.js') },
  { pattern: /^\/rule\/([^/]+)$/, load: () => import('./pages/rule.js') },
  { pattern: /^\/subscriptions$/, load: () => import('./pages/subscriptions.js') },
  { pattern: /^\/subscriptions\/new$/, load: () => import('./pages/subscriptionEditor.js') },
  { pattern: /^\/subscription\/([^/]+)\/([^/]+)$/, load: () => import('./pages/subscription.js') },
  { pattern: /^\/subscription\/([^/]+)\/([^/]+)\/edit$/, load: () => import('./pages/subscriptionEditor.js') },
  { pattern: /^\/replicas$/, load: () => import('./pages/replicas.js') },
  { pattern: /^\/exceptions$/, load: () => import('./pages/exceptions.js') },
  { pattern: /^\/history\/(did|rule|rse|account|subscription)\/(.+)$/, load: () => import('./pages/history.js') },
  { pattern: /^\/audit$/, load: () => import('./pages/feed.js'), admin: true },
  { pattern: /^\/projections$/, load: () => import('./pages/projections.js'), admin: true },
  { pattern: /^\/daemons$/, load: () => import('./pages/daemons.js'), admin: true },
  { pattern: /^\/transfers$/, load: () => import('./pages/transfers.js'), admin: true },
  { pattern: /^\/config$/, load: () => import('./pages/config.js'), admin: true },
];

/**
 * The navigation: the daily pages in the bar, the rest under "More" (with the admins' own group).
 * Each item is highlighted on its pages only: a rule's page and its history are under Rules, a
 * DID's history under Find data.
 * @typedef {{ hash: string, label: string, admin?: boolean, match: RegExp }} NavItem
 * @type {NavItem[]}
 */
const NAV = [
  { hash: '#/', label: 'Find data', match: /^\/($|did\/|history\/did\/)/ },
  { hash: '#/rules', label: 'Rules', match: /^\/(rules$|rule\/|history\/rule\/)/ },
  { hash: '#/rules/new', label: 'New rule', match: /^\/rules\/new$/ },
  {
    hash: '#/subscriptions',
    label: 'Subscriptions',
    match: /^\/(subscriptions|subscription\/|history\/subscription\/)/,
  },
  { hash: '#/rses', label: 'Storage', match: /^\/(rses$|rse\/|history\/rse\/)/ },
  { hash: '#/account/me', label: 'My account', match: /^\/account\/me$/ },
];

/** @type {NavItem[]} */
const MORE = [
  { hash: '#/scopes', label: 'Scopes', match: /^\/scopes$/ },
  { hash: '#/replicas', label: 'Bad and suspicious replicas', match: /^\/replicas$/ },
  { hash: '#/exceptions', label: 'Lifetime exceptions', match: /^\/exceptions$/ },
  { hash: '#/accounts', label: 'Accounts', admin: true, match: /^\/(accounts$|account\/(?!me$)|history\/account\/)/ },
  { hash: '#/audit', label: 'Audit', admin: true, match: /^\/audit$/ },
  { hash: '#/projections', label: 'Projections', admin: true, match: /^\/projections$/ },
  { hash: '#/daemons', label: 'Daemons', admin: true, match: /^\/daemons$/ },
  { hash: '#/transfers', label: 'Transfers', admin: true, match: /^\/transfers$/ },
  { hash: '#/config', label: 'Configuration', admin: true, match: /^\/config$/ },
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

/**
 * @param {NavItem} item
 * @param {string} path
 */
const navLink = (item, path) =>
  h('li', null, h('a', { href: item.hash, ...(item.match.test(path) ? { 'aria-current': 'page' } : {}) }, item.label));

/** @param {string} path */
const renderChrome = (path) => {
  const identity = who();
  if (!identity) {
    replace(nav);
    replace(whoBox);
    return;
  }
  const everyone = MORE.filter((item) => !item.admin);
  const admins = identity.admin ? MORE.filter((item) => item.admin) : [];
  const moreCurrent = [...everyone, ...admins].some((item) => item.match.test(path));
  const morePanel = h(
    'div',
    { class: 'more-panel', id: 'nav-more' },
    h(
      'ul',
      { 'aria-label': 'More pages' },
      everyone.map((item) => navLink(item, path)),
    ),
    admins.length > 0
      ? [
          h('p', { class: 'more-group', id: 'nav-admin' }, 'Admin'),
          h(
            'ul',
            { 'aria-labelledby': 'nav-admin' },
            admins.map((item) => navLink(item, path)),
          ),
        ]
      : null,
  );
  const moreButton = h(
    'button',
    {
      type: 'button',
      class: `nav-more-button${moreCurrent ? ' has-current' : ''}`,
      'aria-expanded': 'false',
      'aria-controls': 'nav-more',
    },
    'More',
    h('span', { 'aria-hidden': 'true' }, ' ▾'),
  );
  const menuButton = h(
    'button',
    { type: 'button', class: 'menu-toggle', 'aria-expanded': 'false', 'aria-controls': 'nav-list' },
    h('span', { 'aria-hidden': 'true' }, '☰ '),
    'Menu',
  );
  const list = h(
    'ul',
    { class: 'nav-list', id: 'nav-list' },
    NAV.map((item) => navLink(item, path)),
    h('li', { class: 'nav-more' }, moreButton, morePanel),
  );
  /** @param {HTMLButtonElement} button @param {boolean} open */
  const toggle = (button, open) => {
    button.setAttribute('aria-expanded', String(open));
    nav.classList.toggle(button === menuButton ? 'open' : 'more-open', open);
  };
  menuButton.addEventListener('click', () => toggle(menuButton, menuButton.getAttribute('aria-expanded') !== 'true'));
  moreButton.addEventListener('click', () => toggle(moreButton, moreButton.getAttribute('aria-expanded') !== 'true'));
  // Escape closes what is open, wherever the focus is (a menu item, or nothing after a click).
  document.onkeydown = (event) => {
    if (event.key !== 'Escape') return;
    if (nav.classList.contains('more-open')) {
      toggle(moreButton, false);
      moreButton.focus();
    } else if (nav.classList.contains('open')) {
      toggle(menuButton, false);
      menuButton.focus();
    }
  };
  nav.classList.remove('open', 'more-open');
  replace(nav, menuButton, list);
  replace(
    whoBox,
    h(
      'a',
      { class: 'who-name', href: '#/account/me', title: identity.identity ?? '' },
      identity.account,
      identity.admin ? h('span', { class: 'tag' }, identity.root ? 'root' : 'admin') : null,
    ),
    h('button', { type: 'button', class: 'button ghost small', onclick: logout }, 'Log out'),
  );
};

// A click outside the open "More" panel closes it.
document.addEventListener('click', (event) => {
  if (!nav.classList.contains('more-open')) return;
  const target = event.target;
  if (target instanceof Node && nav.querySelector('.nav-more')?.contains(target)) return;
  nav.classList.remove('more-open');
  nav.querySelector('.nav-more-button')?.setAttribute('aria-expanded', 'false');
});

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
  window.scrollTo(0, 0);
  if (!route) {
    document.title = 'Not found · dms console';
    notFoundPage(main, { what: h('span', null, 'The console has no page at ', h('code', null, `#${path}`), '.') });
    return;
  }
  if (route.admin && !identity?.admin) {
    document.title = 'For admins · dms console';
    replace(
      main,
      h('h1', null, 'For admins'),
      h('p', null, 'This page is for admin accounts; yours cannot open it.'),
      h('p', null, h('a', { href: '#/', class: 'button' }, 'Find data')),
    );
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
    if (error instanceof ApiError && error.status === 404) {
      document.title = 'Not found · dms console';
      notFoundPage(main, { title: 'Not found', what: 'What this page shows does not exist (any more).', error });
      return;
    }
    replace(
      main,
      h('h1', null, 'Something went wrong'),
      errorBox(error),
      h(
        'p',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button', onclick: () => history.back() }, '← Back'),
        h('button', { type: 'button', class: 'button primary', onclick: () => void show() }, 'Try again'),
        h('a', { href: '#/', class: 'button' }, 'Find data'),
      ),
    );
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

// A tab that was logged in before a reload keeps its session, read again: what the account may do
// can have changed since (an attribute given or taken). The server still decides every request.
const refreshSession = async () => {
  const current = token();
  if (!current) return;
  const session = await getJson('/console/session').catch(() => undefined);
  if (session && token() === current) remember(current, session);
};
void refreshSession().then(() => show());
