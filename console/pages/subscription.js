import { allLines, part } from '../lib/api.js';
import {
  accountLink,
  badge,
  fields,
  formatCount,
  h,
  link,
  pageHead,
  replace,
  section,
  timeElement,
} from '../lib/dom.js';
import { rulesTable } from '../lib/ruleViews.js';
import { can } from '../lib/session.js';

/**
 * One subscription: its settings, its filter and the rules it asks for (as the JSON it keeps),
 * the rules it made per state, and those rules themselves.
 */
export const title = 'Subscription';

/** @param {string} text */
const pretty = (text) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [account = '', name = ''] = view.params;
  const path = `${part(account)}/${part(name)}`;
  const [subscription] = await allLines(`/subscriptions/${path}`, 1);
  const [states, rules] = await Promise.all([
    allLines(`/subscriptions/${path}/rules/states`).catch(() => []),
    allLines(`/subscriptions/${path}/rules`, 500).catch(() => []),
  ]);
  replace(
    view.main,
    pageHead(subscription.name, null, {
      eyebrow: [
        h('a', { href: '#/subscriptions' }, 'subscriptions'),
        ' / ',
        h('span', { class: 'keep-case' }, account),
      ],
      titleAttributes: { class: 'break' },
      actions: [
        can(view.who, 'updateSubscription')
          ? link(`#/subscription/${encodeURIComponent(account)}/${encodeURIComponent(name)}/edit`, 'Edit', {
              class: 'button primary',
            })
          : null,
        can(view.who, 'readHistory')
          ? link(`#/history/subscription/${encodeURIComponent(subscription.id)}`, 'History', { class: 'button' })
          : null,
      ],
    }),
    h(
      'div',
      { class: 'grid two' },
      section(
        'Settings',
        fields([
          ['Account', accountLink(subscription.account)],
          ['State', badge(subscription.state)],
          ['Comments', subscription.comments],
          ['Priority', String(subscription.policyid ?? '–')],
          ['Retroactive', subscription.retroactive ? 'yes: DIDs that existed before count too' : 'no: new DIDs only'],
          ['Dry run', subscription.dry_run ? 'yes: records what it would make, makes nothing' : 'no'],
          ['Last processed', timeElement(subscription.last_processed)],
          ['Expires', subscription.lifetime ? timeElement(subscription.lifetime) : 'never'],
          ['Created', timeElement(subscription.created_at)],
          ['Id', h('code', null, subscription.id)],
        ]),
      ),
      section(
        'Rules it made, per state',
        states.length === 0
          ? h('p', { class: 'muted empty' }, 'No rule yet.')
          : fields(states.map((row) => [row.state, formatCount(row.count)])),
      ),
    ),
    h(
      'div',
      { class: 'grid two' },
      section(
        'Filter',
        h('pre', { class: 'json', tabIndex: 0, id: 'subscription-filter' }, pretty(subscription.filter)),
      ),
      section(
        'Rules it asks for',
        h('pre', { class: 'json', tabIndex: 0, id: 'subscription-rules' }, pretty(subscription.replication_rules)),
      ),
    ),
    section(
      `Rules it made${rules.length >= 500 ? ' (first 500)' : ''}`,
      rulesTable(rules, { showDid: true, empty: 'No rule yet.' }),
      {
        id: 'subscription-made',
      },
    ),
  );
};
