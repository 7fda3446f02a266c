import { allLines, call, getJson, part, query } from '../lib/api.js';
import {
  badge,
  confirmDialog,
  errorBox,
  fields,
  formatBytes,
  formatCount,
  h,
  link,
  pageHead,
  progressBar,
  replace,
  rseLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { accountAdminSections } from './accountAdmin.js';
import { rulesTable } from '../lib/ruleViews.js';
import { can } from '../lib/session.js';

/**
 * An account: its record, its quotas and usage per RSE (and per RSE expression), and its rules,
 * followed live while one is not OK. An admin account is held to no quota: the page says so
 * instead of showing limits of 0. For the accounts the API lets manage others, its identities,
 * attributes, quotas and status can be changed here (pages/accountAdmin.js).
 */
export const title = 'Account';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const name = view.params[0] === 'me' ? view.who.account : (view.params[0] ?? '');
  const path = part(name);
  const account = await getJson(`/accounts/${path}`);
  const [usage, globalUsage, scopes, attributes] = await Promise.all([
    allLines(`/accounts/${path}/usage/local`).catch(() => []),
    allLines(`/accounts/${path}/usage/global`).catch(() => []),
    getJson(`/accounts/${path}/scopes/`).catch(() => []),
    getJson(`/accounts/${path}/attr/`).catch(() => []),
  ]);
  const unbound =
    account.account === 'root' || attributes.some((/** @type {any} */ attribute) => attribute.key === 'admin');
  const rulesBox = h('div', { id: 'account-rules' });
  const statusBox = h('div', { 'aria-live': 'polite' });
  const adminBox = h('div', { id: 'account-admin' });

  const toggleStatus = async () => {
    const suspend = account.status === 'ACTIVE';
    const answer = await confirmDialog({
      title: suspend ? `Suspend ${account.account}?` : `Activate ${account.account}?`,
      body: h(
        'p',
        null,
        suspend
          ? 'Its sessions stop working at once and it cannot log in; its data and rules stay.'
          : 'It can log in again with its identities.',
      ),
      confirm: suspend ? 'Suspend' : 'Activate',
      danger: suspend,
    });
    if (!answer) return;
    try {
      await call(`/accounts/${path}`, { method: 'PUT', body: { status: suspend ? 'SUSPENDED' : 'ACTIVE' } });
      view.navigate(location.hash);
    } catch (error) {
      replace(statusBox, errorBox(error));
    }
  };

  replace(
    view.main,
    pageHead(account.account, null, {
      eyebrow: 'account',
      actions: [
        link(`#/rules${query({ account: account.account })}`, 'Its rules', { class: 'button' }),
        link('#/rules/new', 'New rule', { class: 'button primary' }),
        can(view.who, 'updateAccount') && account.account !== view.who.account
          ? h(
              'button',
              { type: 'button', class: `button${account.status === 'ACTIVE' ? ' danger' : ''}`, onclick: toggleStatus },
              account.status === 'ACTIVE' ? 'Suspend' : 'Activate',
            )
          : null,
        can(view.who, 'readHistory')
          ? link(`#/history/account/${encodeURIComponent(account.account)}`, 'History', { class: 'button' })
          : null,
      ],
    }),
    statusBox,
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
                    link(`#/${query({ scope })}`, scope, { class: 'keep-case' }),
                  ]),
                ),
          ],
          ['Quotas', unbound ? 'none: an admin account is held to no quota' : 'per RSE and per RSE expression, below'],
        ]),
      ),
      unbound
        ? section(
            'Quotas',
            h(
              'p',
              { class: 'alert info', id: 'quota-note' },
              `${account.account} is an admin account: its rules are held to no quota. What it stores is below.`,
            ),
          )
        : section(
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
      unbound ? 'Usage per RSE' : 'Quotas and usage per RSE',
      table(
        unbound ? ['RSE', 'Files', 'Used'] : ['RSE', 'Files', 'Used', 'Quota', 'Remaining', ''],
        usage.map((row) =>
          unbound
            ? [rseLink(row.rse), formatCount(row.files), formatBytes(row.bytes)]
            : [
                rseLink(row.rse),
                formatCount(row.files),
                formatBytes(row.bytes),
                row.bytes_limit ? formatBytes(row.bytes_limit) : h('span', { class: 'muted' }, 'none'),
                row.bytes_limit
                  ? row.bytes_remaining < 0
                    ? h('span', { class: 'bad-text' }, `over by ${formatBytes(-row.bytes_remaining)}`)
                    : formatBytes(row.bytes_remaining)
                  : '–',
                row.bytes_limit ? progressBar(row.bytes / row.bytes_limit, `${row.rse}: quota used`) : '',
              ],
        ),
        {
          empty: unbound ? 'Nothing stored on any RSE.' : 'No quota and no usage on any RSE.',
          numeric: unbound ? [1, 2] : [1, 2, 3, 4],
          caption: 'Quotas and usage per RSE',
        },
      ),
    ),
    adminBox,
    rulesBox,
  );
  if (!unbound || view.who.admin) await accountAdminSections(adminBox, view, account, unbound);
  const showRules = async () => {
    const rules = await allLines(`/accounts/${path}/rules`, 500);
    replace(
      rulesBox,
      section(`Rules${rules.length >= 500 ? ' (first 500)' : ''}`, rulesTable(rules, { showDid: true }), {
        actions: link(`#/rules${query({ account: account.account })}`, 'All, page by page', { class: 'button small' }),
      }),
    );
    return rules.some((/** @type {any} */ rule) => rule.state !== 'OK');
  };
  const busy = await showRules().catch((error) => {
    replace(rulesBox, section('Rules', errorBox(error)));
    return false;
  });
  if (busy) view.every(3000, showRules);
};
