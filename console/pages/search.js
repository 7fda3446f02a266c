import { allLines, getJson, part, query } from '../lib/api.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import {
  badge,
  didLink,
  errorBox,
  formatBytes,
  formatCount,
  h,
  link,
  pageHead,
  replace,
  rseLink,
  section,
  table,
} from '../lib/dom.js';

/**
 * Find data: DIDs of a scope by name pattern, type and metadata (GET /dids/{scope}/dids/search),
 * and the storage elements to look at. The search is in the URL, so a result can be shared and
 * the back button works.
 */
export const title = 'Find data';

const LIMIT = 500;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const scope = view.query.get('scope') ?? '';
  const name = view.query.get('name') ?? '*';
  const type = view.query.get('type') ?? 'all';
  const meta = view.query.get('meta') ?? '';

  const [scopes, types] = await Promise.all([getJson('/scopes/').catch(() => []), enumOf(ENUMS.searchType)]);
  const scopeInput = h('input', {
    id: 'search-scope',
    name: 'scope',
    list: 'scope-list',
    required: true,
    value: scope || (scopes.length === 1 ? scopes[0] : ''),
    placeholder: 'user.jdoe',
    autocomplete: 'off',
  });
  const nameInput = h('input', { id: 'search-name', name: 'name', value: name, placeholder: 'run2026*' });
  const typeSelect = h(
    'select',
    { id: 'search-type', name: 'type' },
    types.map((value) => h('option', { value, selected: value === type }, value)),
  );
  const metaInput = h('input', {
    id: 'search-meta',
    name: 'meta',
    value: meta,
    placeholder: 'datatype=AOD, project=demo',
    autocomplete: 'off',
  });
  const results = h('div', { id: 'search-results', 'aria-live': 'polite' });

  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    view.navigate(
      `#/${query({ scope: scopeInput.value.trim(), name: nameInput.value.trim() || '*', type: typeSelect.value, meta: metaInput.value.trim() })}`,
    );
  };

  replace(
    view.main,
    pageHead(
      'Find data',
      [
        'Search the data identifiers of a scope by name, type and metadata, or ',
        link('#/scopes', 'browse the scopes'),
        '.',
      ],
      { titleAttributes: { tabIndex: -1 } },
    ),
    h(
      'form',
      { class: 'card search-form', role: 'search', onsubmit: onSubmit },
      h(
        'datalist',
        { id: 'scope-list' },
        scopes.map((/** @type {string} */ value) => h('option', { value })),
      ),
      h('div', { class: 'field' }, h('label', { for: 'search-scope' }, 'Scope'), scopeInput),
      h(
        'div',
        { class: 'field grow' },
        h('label', { for: 'search-name' }, 'Name pattern'),
        nameInput,
        h('small', { class: 'hint' }, '* matches anything'),
      ),
      h('div', { class: 'field' }, h('label', { for: 'search-type' }, 'Type'), typeSelect),
      h(
        'div',
        { class: 'field grow' },
        h('label', { for: 'search-meta' }, 'Metadata'),
        metaInput,
        h('small', { class: 'hint' }, 'key=value, comma-separated; length.gt=10 compares'),
      ),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Search')),
    ),
    results,
    h('div', { id: 'rse-overview' }),
  );

  if (scope) await showResults(results, scope, name, type, meta);
  else replace(results, h('p', { class: 'muted' }, 'Choose a scope and search; the results link to each DID’s page.'));
  await showRses(/** @type {HTMLElement} */ (view.main.querySelector('#rse-overview')));
};

/**
 * @param {HTMLElement} target
 * @param {string} scope
 * @param {string} name
 * @param {string} type
 * @param {string} meta
 */
const showResults = async (target, scope, name, type, meta) => {
  replace(target, h('p', { class: 'muted' }, 'Searching…'));
  /** @type {Record<string, string>} */
  const filters = { type, name, long: 'True', limit: String(LIMIT) };
  for (const pair of meta.split(/[,\n]/)) {
    const [key, ...rest] = pair.split('=');
    if (key?.trim() && rest.length > 0) filters[key.trim()] = rest.join('=').trim();
  }
  try {
    const found = await allLines(`/dids/${part(scope)}/dids/search${query(filters)}`, LIMIT);
    replace(
      target,
      section(
        `${found.length >= LIMIT ? `First ${LIMIT}` : formatCount(found.length)} ${found.length === 1 ? 'result' : 'results'} in ${scope}`,
        table(
          ['Data identifier', 'Type', 'Size', 'Files', ''],
          found.map((did) => [
            didLink(did.scope, did.name),
            badge(did.did_type),
            formatBytes(did.bytes),
            did.did_type === 'FILE' ? '1' : formatCount(did.length),
            link(`#/rules/new${query({ did: `${did.scope}:${did.name}` })}`, 'Ask for a copy', {
              class: 'button small',
              'aria-label': `Ask for a copy of ${did.scope}:${did.name}`,
            }),
          ]),
          { empty: 'No data identifier matches.', numeric: [2, 3], caption: 'Search results' },
        ),
        { id: 'results' },
      ),
    );
  } catch (error) {
    replace(target, errorBox(error));
  }
};

/** @param {HTMLElement} target */
const showRses = async (target) => {
  const rses = await allLines('/rses/', 500).catch(() => []);
  if (rses.length === 0) return;
  replace(
    target,
    section(
      'Storage elements',
      h(
        'ul',
        { class: 'chips' },
        rses.map((rse) =>
          h('li', null, rseLink(rse.rse), h('span', { class: 'muted small' }, ` ${rse.rse_type ?? ''}`)),
        ),
      ),
    ),
  );
};
