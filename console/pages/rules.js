import { getJson, part, query } from '../lib/api.js';
import {
  accountLink,
  badge,
  didLink,
  errorBox,
  formatBytes,
  h,
  notice,
  pageHead,
  replace,
  ruleLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { askApproval } from '../lib/ruleActions.js';
import { lockBar } from '../lib/ruleViews.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * Every rule of the system, newest first, filtered by state (STUCK, waiting for approval, …),
 * account, activity or RSE expression, a page at a time from a cursor (`GET /console/rules`, on an
 * index per filter: fast with a hundred thousand rules). The filters and the page are in the URL,
 * so a list can be shared and Back returns to the previous page. Rules waiting for approval can be
 * approved or denied here by the accounts the API lets do so.
 */
export const title = 'Rules';

const PAGE = 50;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const filters = {
    state: view.query.get('state') ?? '',
    account: view.query.get('account') ?? '',
    activity: view.query.get('activity') ?? '',
    rse_expression: view.query.get('rse_expression') ?? '',
  };
  const after = view.query.get('after') ?? '';
  const page = Number(view.query.get('page') ?? '1') || 1;
  // The choices are the API's own (its OpenAPI document); the form is built once they are known.
  const [states, activities] = await Promise.all([enumOf(ENUMS.ruleState), enumOf(ENUMS.activity)]);

  const state = h(
    'select',
    { id: 'rules-state', name: 'state' },
    h('option', { value: '' }, 'any state'),
    states.map((value) => h('option', { value, selected: value === filters.state }, value)),
  );
  const account = h('input', {
    id: 'rules-account',
    name: 'account',
    value: filters.account,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'any account',
  });
  const activity = h(
    'select',
    { id: 'rules-activity', name: 'activity' },
    h('option', { value: '' }, 'any activity'),
    activities.map((value) => h('option', { value, selected: value === filters.activity }, value)),
  );
  const expression = h('input', {
    id: 'rules-expression',
    name: 'rse_expression',
    value: filters.rse_expression,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'any, or as written: POSIX_B, tier=1',
  });
  const results = h('div', { id: 'rules-results', 'aria-live': 'polite' });
  const message = h('div');

  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    view.navigate(
      `#/rules${query({ state: state.value, account: account.value.trim(), activity: activity.value, rse_expression: expression.value.trim() })}`,
    );
  };

  replace(
    view.main,
    pageHead('Rules', 'Every replication rule, newest first. Filter by state, owner, activity or RSE expression.', {
      actions: [
        h('a', { href: '#/rules?state=STUCK', class: 'button' }, 'Stuck'),
        h('a', { href: '#/rules?state=WAITING_APPROVAL', class: 'button' }, 'Waiting for approval'),
        h('a', { href: `#/rules${query({ account: view.who.account })}`, class: 'button' }, 'Mine'),
        h('a', { href: '#/rules/new', class: 'button primary' }, 'New rule'),
      ],
    }),
    h(
      'form',
      { class: 'card search-form', role: 'search', 'aria-label': 'Filter the rules', onsubmit: onSubmit },
      h('div', { class: 'field' }, h('label', { for: 'rules-state' }, 'State'), state),
      h('div', { class: 'field' }, h('label', { for: 'rules-account' }, 'Account'), account),
      h('div', { class: 'field' }, h('label', { for: 'rules-activity' }, 'Activity'), activity),
      h('div', { class: 'field grow' }, h('label', { for: 'rules-expression' }, 'RSE expression'), expression),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Filter')),
    ),
    message,
    results,
  );

  const approver = can(view.who, 'approveRule');

  /** @param {any} rule @param {boolean} approve */
  const decide = async (rule, approve) => {
    const options = await askApproval(approve, [
      h(
        'p',
        null,
        ruleLink(rule.id),
        ': ',
        `${rule.copies} of `,
        h('code', null, `${rule.scope}:${rule.name}`),
        ' on ',
        h('code', null, rule.rse_expression),
        ` for ${rule.account}.`,
      ),
      approve
        ? h('p', null, 'The rule starts placing its copies at once.')
        : h('p', null, 'A denied rule is deleted; its owner sees the reason in its history.'),
    ]);
    if (!options) return;
    try {
      await getJson(`/rules/${part(rule.id)}`, {
        method: 'PUT',
        body: { options },
      });
      replace(message, notice('good', `Rule ${rule.id} ${approve ? 'approved' : 'denied'}.`));
      await load();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  const load = async () => {
    replace(results, h('p', { class: 'muted' }, 'Reading the rules…'));
    try {
      const found = await getJson(`/console/rules${query({ ...filters, after, limit: PAGE })}`);
      const first = (page - 1) * PAGE + 1;
      const rows = found.rules.map((/** @type {any} */ rule) => [
        ruleLink(rule.id),
        didLink(rule.scope, rule.name),
        h('code', null, rule.rse_expression),
        badge(rule.state),
        lockBar(rule),
        formatBytes(rule.bytes),
        accountLink(rule.account),
        h('span', { class: 'small' }, rule.activity),
        timeElement(rule.created_at),
        approver && rule.state === 'WAITING_APPROVAL'
          ? h(
              'span',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'button small',
                  'aria-label': `Approve rule ${rule.id}`,
                  onclick: () => decide(rule, true),
                },
                'Approve',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'button small danger',
                  'aria-label': `Deny rule ${rule.id}`,
                  onclick: () => decide(rule, false),
                },
                'Deny',
              ),
            )
          : '',
      ]);
      replace(
        results,
        section(
          found.rules.length === 0
            ? 'No rule'
            : `Rules ${first.toLocaleString('en')}–${(first + found.rules.length - 1).toLocaleString('en')}${found.next ? '' : ' (the last)'}`,
          [
            table(
              [
                'Rule',
                'Data identifier',
                'RSE expression',
                'State',
                'Locks',
                'Size',
                'Account',
                'Activity',
                'Created',
                '',
              ],
              rows,
              { empty: 'No rule matches these filters.', numeric: [5], caption: 'Rules' },
            ),
            h(
              'div',
              { class: 'pager' },
              page > 1
                ? h('a', { class: 'button small', href: `#/rules${query(filters)}` }, '« First page')
                : h('span'),
              found.next
                ? h(
                    'a',
                    {
                      class: 'button small',
                      id: 'rules-next',
                      href: `#/rules${query({ ...filters, after: found.next, page: page + 1 })}`,
                    },
                    'Next page »',
                  )
                : null,
            ),
          ],
          { id: 'rules' },
        ),
      );
    } catch (error) {
      replace(results, errorBox(error));
    }
  };
  await load();
};
