import { allLines, call, part } from '../lib/api.js';
import { accountLink, badge, h, pageHead, replace, section, table } from '../lib/dom.js';
import { actionForm, field, resultBox, textInput } from '../lib/forms.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * The accounts (the API lists the active ones): each opens its page (identities, attributes,
 * quotas, rules). Root adds accounts here.
 */
export const title = 'Accounts';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const list = h('div', { id: 'account-list' });
  const filter = textInput('account-filter', { type: 'search', placeholder: 'part of a name' });
  const addBox = h('div', { id: 'account-add' });
  replace(
    view.main,
    pageHead('Accounts', 'Who owns data, rules and quotas: users, groups and services.'),
    h('div', { class: 'card search-form' }, field('Show accounts containing', filter, { grow: true })),
    list,
    addBox,
  );
  /** @type {any[]} */
  let accounts = [];
  const show = () => {
    const text = filter.value.trim();
    replace(
      list,
      section(
        `${accounts.length} active account${accounts.length === 1 ? '' : 's'}`,
        table(
          ['Account', 'Type', 'Email'],
          accounts
            .filter((account) => !text || account.account.includes(text))
            .map((account) => [accountLink(account.account), badge(account.type), account.email ?? '–']),
          { empty: 'No account matches.', caption: 'Accounts' },
        ),
      ),
    );
  };
  const load = async () => {
    accounts = await allLines('/accounts/', 10_000);
    show();
  };
  filter.addEventListener('input', show);
  await load();
  if (!can(view.who, 'addAccount')) return;
  // The types the API takes (its OpenAPI document); the form appears once they are known.
  const accountTypes = await enumOf(ENUMS.accountType);
  /** @param {string} [said] */
  const showAdd = (said) => {
    const name = textInput('account-new-name', {
      required: true,
      pattern: '[a-z0-9_-]{1,25}',
      title: 'Lower case, digits, _ and -, at most 25',
      placeholder: 'jdoe',
    });
    const type = h(
      'select',
      { id: 'account-new-type' },
      accountTypes.map((value) => h('option', { value }, value)),
    );
    const email = textInput('account-new-email', { type: 'email', required: true, placeholder: 'jdoe@example.org' });
    replace(
      addBox,
      section('Add an account', [
        actionForm({
          label: 'Add account',
          fields: [field('Account', name), field('Type', type), field('Email', email, { grow: true })],
          submit: async () => {
            await call(`/accounts/${part(name.value.trim())}`, {
              method: 'POST',
              body: { type: type.value, email: email.value.trim() },
            });
            return `Account ${name.value.trim()} added: give it an identity on its page.`;
          },
          after: async (message) => {
            await load();
            showAdd(message);
          },
        }),
        resultBox(said),
      ]),
    );
  };
  showAdd();
};
