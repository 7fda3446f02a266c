import { allLines, query } from '../lib/api.js';
import { accountLink, badge, h, link, pageHead, replace, section, table, timeElement } from '../lib/dom.js';
import { field, textInput } from '../lib/forms.js';
import { can } from '../lib/session.js';

/**
 * Subscriptions: standing orders that make rules for every new DID matching their filter. The
 * list, filtered by account; each opens its page (its filter, its rules, the rules it made).
 */
export const title = 'Subscriptions';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const account = view.query.get('account') ?? '';
  const filter = textInput('subscriptions-account', { value: account, placeholder: 'any account' });
  const list = h('div', { id: 'subscription-list' });
  replace(
    view.main,
    pageHead('Subscriptions', 'Standing orders: each makes rules for every new DID that matches its filter.', {
      actions: can(view.who, 'addSubscription')
        ? link('#/subscriptions/new', 'New subscription', { class: 'button primary' })
        : null,
    }),
    h(
      'form',
      {
        class: 'card search-form',
        role: 'search',
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          view.navigate(`#/subscriptions${query({ account: filter.value.trim() })}`);
        },
      },
      field('Account', filter, { grow: true }),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Show')),
    ),
    list,
  );
  // Rucio answers 404 SubscriptionNotFound for an account without any: an empty list here.
  const found = await allLines(
    account ? `/subscriptions/${encodeURIComponent(account)}` : '/subscriptions/',
    5000,
  ).catch(() => []);
  replace(
    list,
    section(
      `${found.length} subscription${found.length === 1 ? '' : 's'}`,
      table(
        ['Name', 'Account', 'State', 'Comments', 'Last processed', 'Expires'],
        found.map((subscription) => [
          link(
            `#/subscription/${encodeURIComponent(subscription.account)}/${encodeURIComponent(subscription.name)}`,
            subscription.name,
          ),
          accountLink(subscription.account),
          badge(subscription.state),
          h('span', { class: 'small break' }, subscription.comments ?? ''),
          timeElement(subscription.last_processed),
          subscription.lifetime ? timeElement(subscription.lifetime) : h('span', { class: 'muted' }, 'never'),
        ]),
        { empty: 'No subscription.', caption: 'Subscriptions' },
      ),
    ),
  );
};
