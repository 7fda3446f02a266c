import { accountLink, badge, didLink, formatCount, h, ruleLink, rseLink, table, timeElement } from './dom.js';

/**
 * A rule's locks as one bar: OK, replicating and stuck side by side, each part labelled with its
 * count (the numbers are in the text, not only in the colours).
 * @param {{ locks_ok_cnt: number, locks_replicating_cnt: number, locks_stuck_cnt: number }} rule
 */
export const lockBar = (rule) => {
  const parts = [
    ['ok', rule.locks_ok_cnt ?? 0, 'OK'],
    ['replicating', rule.locks_replicating_cnt ?? 0, 'replicating'],
    ['stuck', rule.locks_stuck_cnt ?? 0, 'stuck'],
  ];
  const total = parts.reduce((sum, [, count]) => sum + Number(count), 0);
  const label = parts.map(([, count, name]) => `${count} ${name}`).join(', ');
  return h(
    'div',
    { class: 'lockbar-wrap' },
    h(
      'div',
      { class: 'lockbar', role: 'img', 'aria-label': `Locks: ${label}` },
      total === 0
        ? h('div', { class: 'lockbar-part none', style: { flexGrow: '1' } })
        : parts
            .filter(([, count]) => Number(count) > 0)
            .map(([kind, count]) => h('div', { class: `lockbar-part ${kind}`, style: { flexGrow: String(count) } })),
    ),
    h('span', { class: 'lockbar-text' }, label),
  );
};

/**
 * The rules of a DID or an account as a table.
 * @param {any[]} rules
 * @param {{ showDid?: boolean, empty?: string }} [options]
 */
export const rulesTable = (rules, options = {}) =>
  table(
    ['Rule', ...(options.showDid ? ['Data identifier'] : []), 'RSE expression', 'State', 'Locks', 'Account', 'Expires'],
    rules.map((rule) => [
      ruleLink(rule.id),
      ...(options.showDid ? [didLink(rule.scope, rule.name)] : []),
      h('code', null, rule.rse_expression),
      badge(rule.state),
      lockBar(rule),
      accountLink(rule.account),
      rule.expires_at ? timeElement(rule.expires_at) : h('span', { class: 'muted' }, 'never'),
    ]),
    { empty: options.empty ?? 'No rules.', caption: 'Rules' },
  );

/**
 * Counts of locks per RSE and state.
 * @param {any[]} locks
 */
export const locksPerRse = (locks) => {
  /** @type {Map<string, Record<string, number>>} */
  const counts = new Map();
  for (const lock of locks) {
    const row = counts.get(lock.rse) ?? {};
    row[lock.state] = (row[lock.state] ?? 0) + 1;
    counts.set(lock.rse, row);
  }
  return table(
    ['RSE', 'OK', 'Replicating', 'Stuck'],
    [...counts].map(([rse, row]) => [
      rseLink(rse),
      formatCount(row.OK ?? 0),
      formatCount(row.REPLICATING ?? 0),
      formatCount(row.STUCK ?? 0),
    ]),
    { empty: 'No locks.', numeric: [1, 2, 3], caption: 'Locks per RSE and state' },
  );
};

/**
 * Whether an account is held to quotas: admins (root, or an `admin` attribute) are not, as rule
 * creation decides (commands/rule/ruleCreationCommands.ts).
 * @param {string} account
 * @returns {Promise<boolean>}
 */
export const isAdminAccount = async (account) => {
  if (account === 'root') return true;
  const { getJson, part } = await import('./api.js');
  const attributes = await getJson(`/accounts/${part(account)}/attr/`).catch(() => []);
  return Array.isArray(attributes) && attributes.some((/** @type {any} */ attribute) => attribute.key === 'admin');
};
