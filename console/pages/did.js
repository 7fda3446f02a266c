import { allLines, didPath, getJson, pager, query } from '../lib/api.js';
import {
  accountLink,
  badge,
  didLink,
  errorBox,
  fields,
  formatBytes,
  formatCount,
  h,
  keepFocus,
  link,
  pageHead,
  replace,
  rseLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { rulesTable } from '../lib/ruleViews.js';
import { mayReadDidHistory } from '../lib/access.js';

/**
 * A DID: what it is (type, size, status, metadata), what it holds (content, a page at a time),
 * where it is (replicas per RSE with their state), what holds it (parents) and which rules keep
 * it (with their lock counts, live while one is not OK): for a file, the rules on the file and
 * those on its datasets and containers that lock it. A file downloads through the service's
 * redirect (to one of its replicas) or as a metalink of all of them.
 */
export const title = 'Data identifier';

const PAGE = 50;

/** Columns shown in the summary, left out of the metadata list. */
const SUMMARY_KEYS = new Set([
  'scope',
  'name',
  'account',
  'did_type',
  'is_open',
  'monotonic',
  'bytes',
  'length',
  'md5',
  'adler32',
  'guid',
  'availability',
  'created_at',
  'updated_at',
  'expired_at',
  'closed_at',
  'deleted_at',
  'eol_at',
  'accessed_at',
  'access_cnt',
  'events',
]);

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [scope = '', name = ''] = view.params;
  const path = didPath(scope, name);
  const [did, meta] = await Promise.all([getJson(`/dids/${path}`), getJson(`/dids/${path}/meta`).catch(() => ({}))]);
  const isFile = did.type === 'FILE';
  const showHistory = await mayReadDidHistory(view.who, scope);
  const redirect = `/redirect/${path}`;
  const rulesBox = h('div', { id: 'did-rules' });
  const replicasBox = h('div', { id: 'did-replicas' });

  replace(
    view.main,
    pageHead(`${scope}:${name}`, null, {
      eyebrow: [
        h('a', { href: `#/${query({ scope })}`, class: 'keep-case', 'aria-label': `Scope ${scope}` }, scope),
        ' / ',
        did.type.toLowerCase(),
      ],
      titleAttributes: { class: 'mono break' },
      actions: [
        link(`#/rules/new${query({ did: `${scope}:${name}` })}`, 'Ask for a copy', { class: 'button primary' }),
        isFile ? h('a', { href: redirect, class: 'button', download: name, id: 'did-download' }, 'Download') : null,
        h(
          'a',
          {
            href: `${redirect}/metalink`,
            class: 'button',
            id: 'did-metalink',
            title: 'Every replica, as a Metalink 4 file',
          },
          'Metalink',
        ),
        showHistory
          ? link(`#/history/did/${encodeURIComponent(scope)}/${encodeURIComponent(name)}`, 'History', {
              class: 'button',
            })
          : null,
      ],
    }),
    h(
      'div',
      { class: 'grid two' },
      section(
        'Summary',
        fields([
          ['Type', badge(did.type)],
          ['Owner', accountLink(did.account)],
          ['Size', `${formatBytes(did.bytes)}${did.bytes >= 1000 ? ` (${formatCount(did.bytes)} bytes)` : ''}`],
          ...(isFile
            ? [
                /** @type {[string, any]} */ (['Adler-32', h('code', null, meta.adler32 ?? '–')]),
                /** @type {[string, any]} */ (['MD5', h('code', null, meta.md5 ?? '–')]),
              ]
            : [
                /** @type {[string, any]} */ (['Files', formatCount(did.length)]),
                /** @type {[string, any]} */ (['Status', did.open ? badge('OPEN') : badge('CLOSED')]),
              ]),
          ['Availability', badge(meta.availability ?? null)],
          ['Created', timeElement(meta.created_at)],
          ['Updated', timeElement(meta.updated_at)],
          ['Expires', did.expired_at ? timeElement(did.expired_at) : 'never'],
        ]),
      ),
      section('Metadata', metadataList(meta)),
    ),
    replicasBox,
    rulesBox,
    isFile ? null : h('div', { id: 'did-content' }),
    h('div', { id: 'did-parents' }),
  );

  const showRules = async () => {
    const own = await allLines(`/dids/${path}/rules`);
    if (!isFile) {
      replace(
        rulesBox,
        section('Rules', rulesTable(own), {
          actions: link(`#/rules/new${query({ did: `${scope}:${name}` })}`, 'New rule', { class: 'button small' }),
        }),
      );
      return own;
    }
    // A file is kept by the rules on it and by those on its datasets and containers that lock it.
    const locking = await allLines(`/dids/${path}/associated_rules`);
    const seen = new Set(locking.map((rule) => rule.id));
    const rules = [...locking, ...own.filter((rule) => !seen.has(rule.id))];
    replace(
      rulesBox,
      section(
        'Rules keeping this file',
        [
          h(
            'p',
            { class: 'muted small' },
            'The rules on the file itself and those on its datasets and containers that lock its replicas.',
          ),
          rulesTable(rules, {
            showDid: true,
            empty: 'No rule keeps this file: nothing stops its replicas from being deleted.',
          }),
        ],
        {
          actions: link(`#/rules/new${query({ did: `${scope}:${name}` })}`, 'New rule', { class: 'button small' }),
        },
      ),
    );
    return rules;
  };
  const rules = await showRules().catch((error) => {
    replace(rulesBox, section('Rules', errorBox(error)));
    return [];
  });
  // Rules still at work are followed until they settle.
  if (rules.some((/** @type {any} */ rule) => rule.state !== 'OK')) {
    view.every(2000, async () => {
      /** @type {any[]} */
      let again = [];
      await keepFocus(view.main, async () => {
        again = await showRules();
        await showReplicas(replicasBox, scope, name, did.type);
      });
      return !again.every((/** @type {any} */ rule) => rule.state === 'OK');
    });
  }
  await showReplicas(replicasBox, scope, name, did.type).catch((error) =>
    replace(replicasBox, section('Replicas', errorBox(error))),
  );
  if (!isFile)
    await showContent(/** @type {HTMLElement} */ (view.main.querySelector('#did-content')), path, view.signal);
  await showParents(/** @type {HTMLElement} */ (view.main.querySelector('#did-parents')), path);
};

/** @param {Record<string, unknown>} meta */
const metadataList = (meta) => {
  const pairs = Object.entries(meta)
    .filter(([key, value]) => !SUMMARY_KEYS.has(key) && value !== null && value !== false)
    .map(
      ([key, value]) =>
        /** @type {[string, any]} */ ([
          key,
          typeof value === 'object' ? h('code', null, JSON.stringify(value)) : String(value),
        ]),
    );
  return pairs.length > 0 ? fields(pairs) : h('p', { class: 'muted empty' }, 'No metadata set.');
};

/**
 * Replicas: per RSE for a dataset (files available there), per RSE and state for a file, summed
 * over the files of a container.
 * @param {HTMLElement} target
 * @param {string} scope
 * @param {string} name
 * @param {string} type
 */
const showReplicas = async (target, scope, name, type) => {
  const path = didPath(scope, name);
  if (type === 'DATASET') {
    const rows = await allLines(`/replicas/${path}/datasets`);
    replace(
      target,
      section(
        'Replicas',
        table(
          ['RSE', 'State', 'Files available', 'Bytes available', 'Updated'],
          rows.map((row) => [
            rseLink(row.rse),
            badge(row.state),
            `${formatCount(row.available_length)} of ${formatCount(row.length)}`,
            formatBytes(row.available_bytes),
            timeElement(row.updated_at),
          ]),
          { empty: 'No replica anywhere.', numeric: [2, 3], caption: 'Replicas per RSE' },
        ),
      ),
    );
    return;
  }
  const MAX = 5000;
  const files = await allLines(`/replicas/${path}${query({ all_states: 'True' })}`, MAX);
  /** @type {Map<string, Record<string, number>>} */
  const perRse = new Map();
  for (const file of files) {
    for (const [rse, state] of Object.entries(file.states ?? {})) {
      const row = perRse.get(rse) ?? {};
      row[state] = (row[state] ?? 0) + 1;
      perRse.set(rse, row);
    }
  }
  const stateText = (/** @type {Record<string, number>} */ row) =>
    h(
      'span',
      { class: 'badges' },
      Object.entries(row).map(([state, count]) => [badge(state), type === 'FILE' ? '' : ` ${formatCount(count)} `]),
    );
  const pfns = type === 'FILE' ? (files[0]?.rses ?? {}) : {};
  replace(
    target,
    section('Replicas', [
      table(
        ['RSE', type === 'FILE' ? 'State' : 'Files per state', ...(type === 'FILE' ? ['PFN'] : [])],
        [...perRse].map(([rse, row]) => [
          rseLink(rse),
          stateText(row),
          ...(type === 'FILE' ? [h('code', { class: 'break small' }, (pfns[rse] ?? []).join(' '))] : []),
        ]),
        { empty: 'No replica anywhere.', caption: 'Replicas per RSE' },
      ),
      files.length >= MAX ? h('p', { class: 'muted' }, `Counted over the first ${formatCount(MAX)} files.`) : null,
    ]),
  );
};

/**
 * The content of a collection, a page at a time from one streamed listing.
 * @param {HTMLElement} target
 * @param {string} path
 * @param {AbortSignal} signal
 */
const showContent = async (target, path, signal) => {
  const content = pager(`/dids/${path}/dids`, { signal });
  signal.addEventListener('abort', () => void content.close());
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'button small' }, `Show ${PAGE} more`);
  const count = h('span', { class: 'muted' });
  let shown = 0;
  const load = async () => {
    more.disabled = true;
    const page = await content.next(PAGE);
    for (const child of page) {
      body.appendChild(
        h(
          'tr',
          null,
          h('td', null, didLink(child.scope, child.name)),
          h('td', null, badge(child.type)),
          h('td', { class: 'num' }, formatBytes(child.bytes)),
          h('td', null, h('code', null, child.adler32 ?? '')),
        ),
      );
    }
    shown += page.length;
    replace(count, content.finished ? `${formatCount(shown)} in all` : `first ${formatCount(shown)}`);
    more.disabled = false;
    more.hidden = content.finished;
  };
  more.addEventListener('click', () => void load());
  replace(
    target,
    section(
      'Content',
      [
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            null,
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', { scope: 'col' }, 'Data identifier'),
                h('th', { scope: 'col' }, 'Type'),
                h('th', { scope: 'col', class: 'num' }, 'Size'),
                h('th', { scope: 'col' }, 'Adler-32'),
              ),
            ),
            body,
          ),
        ),
        h('div', { class: 'pager' }, count, more),
      ],
      { id: 'content' },
    ),
  );
  await load();
};

/**
 * @param {HTMLElement} target
 * @param {string} path
 */
const showParents = async (target, path) => {
  const parents = await allLines(`/dids/${path}/parents`, 500).catch(() => []);
  replace(
    target,
    section(
      'Parents',
      parents.length === 0
        ? h('p', { class: 'muted empty' }, 'Attached to no collection.')
        : h(
            'ul',
            { class: 'plain-list' },
            parents.map((parent) => h('li', null, didLink(parent.scope, parent.name), ' ', badge(parent.type))),
          ),
    ),
  );
};
