import { allLines, getJson, part, query } from '../lib/api.js';
import {
  badge,
  errorBox,
  fields,
  formatBytes,
  formatCount,
  h,
  link,
  progressBar,
  replace,
  rseLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { rulesTable } from '../lib/rules.js';

/**
 * An account: its record, its quotas and usage per RSE (and per RSE expression), and its rules,
 * followed live while one is not OK.
 */
export const title = 'Account';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const name = view.params[0] === 'me' ? view.who.account : (view.params[0] ?? '');
  const path = part(name);
  const account = await getJson(`/accounts/${path}`);
  const [usage, globalUsage, scopes] = await Promise.all([
    allLines(`/accounts/${path}/usage/local`).catch(() => []),
    allLines(`/accounts/${path}/usage/global`).catch(() => []),
    getJson(`/accounts/${path}/scopes/`).catch(() => []),
  ]);
  const rulesBox = h('div', { id: 'account-rules' });
  replace(
    view.main,
    h(
      'div',
      { class: 'page-head' },
      h('div', null, h('p', { class: 'eyebrow' }, 'account'), h('h1', null, account.account)),
      h(
        'div',
        { class: 'actions' },
        link('#/rules/new', 'New rule', { class: 'button primary' }),
        view.who.admin
          ? link(`#/history/account/${encodeURIComponent(account.account)}`, 'History', { class: 'button' })
          : null,
      ),
    ),
    h(
      'div',
      { class: 'grid two' },
      section(
        'Account',
        fields([
          ['Type', badge(account.account_type)],
          ['Status', badge(account.status)],
          ['Email', account.email],
          ['Created', timeElement(account.created_at)],
          [
            'Scopes',
            scopes.length === 0
              ? null
              : h(
                  'span',
                  null,
                  scopes.map((/** @type {string} */ scope, /** @type {number} */ index) => [
                    index > 0 ? ', ' : '',
                    link(`#/${query({ scope })}`, scope),
                  ]),
                ),
          ],
        ]),
      ),
      section(
        'Quotas over RSE expressions',
        table(
          ['Expression', 'Used', 'Quota', ''],
          globalUsage.map((row) => [
            h('code', null, row.rse_expression),
            formatBytes(row.bytes),
            formatBytes(row.bytes_limit),
            row.bytes_limit ? progressBar(row.bytes / row.bytes_limit, `${row.rse_expression}: quota used`) : '',
          ]),
          { empty: 'No global quota.', numeric: [1, 2], caption: 'Global quotas' },
        ),
      ),
    ),
    section(
      'Quotas and usage per RSE',
      table(
        ['RSE', 'Files', 'Used', 'Quota', 'Remaining', ''],
        usage.map((row) => [
          rseLink(row.rse),
          formatCount(row.files),
          formatBytes(row.bytes),
          row.bytes_limit === null || row.bytes_limit === undefined
            ? h('span', { class: 'muted' }, 'none')
            : formatBytes(row.bytes_limit),
          formatBytes(row.bytes_remaining),
          row.bytes_limit ? progressBar(row.bytes / row.bytes_limit, `${row.rse}: quota used`) : '',
        ]),
        { empty: 'No quota and no usage on any RSE.', numeric: [1, 2, 3, 4], caption: 'Quotas and usage per RSE' },
      ),
    ),
    rulesBox,
  );
  const showRules = async () => {
    const rules = await allLines(`/accounts/${path}/rules`, 500);
    replace(
      rulesBox,
      section(`Rules${rules.length >= 500 ? ' (first 500)' : ''}`, rulesTable(rules, { showDid: true })),
    );
    return rules.some((/** @type {any} */ rule) => rule.state !== 'OK');
  };
  const busy = await showRules().catch((error) => {
    replace(rulesBox, section('Rules', errorBox(error)));
    return false;
  });
  if (busy) view.every(3000, showRules);
};
