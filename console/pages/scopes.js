import { call, getJson, part, query } from '../lib/api.js';
import { h, link, pageHead, replace, section } from '../lib/dom.js';
import { actionForm, field, resultBox, textInput } from '../lib/forms.js';
import { can } from '../lib/session.js';

/**
 * Every scope, to browse: each opens the search over its DIDs. Admins add a scope for an account.
 */
export const title = 'Scopes';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const list = h('div', { id: 'scope-list' });
  const filter = textInput('scope-filter', { type: 'search', placeholder: 'user.jdoe, data26' });
  const addBox = h('div', { id: 'scope-add' });
  replace(
    view.main,
    pageHead('Scopes', 'Every DID lives in a scope; open one to browse its data.'),
    h('div', { class: 'card search-form' }, field('Show scopes containing', filter, { grow: true })),
    list,
    addBox,
  );
  /** @type {string[]} */
  let scopes = [];
  const show = () => {
    const text = filter.value.trim();
    const shown = scopes.filter((scope) => !text || scope.includes(text));
    replace(
      list,
      section(
        `${shown.length} of ${scopes.length} scope${scopes.length === 1 ? '' : 's'}`,
        shown.length === 0
          ? h('p', { class: 'muted empty' }, 'No scope matches.')
          : h(
              'ul',
              { class: 'chips' },
              shown.map((scope) =>
                h('li', null, link(`#/${query({ scope, name: '*', type: 'all' })}`, scope, { class: 'keep-case' })),
              ),
            ),
      ),
    );
  };
  const load = async () => {
    scopes = (await getJson('/scopes/')).sort();
    show();
  };
  filter.addEventListener('input', show);
  await load();
  if (!can(view.who, 'addScope')) return;
  /** @param {string} [said] */
  const showAdd = (said) => {
    const scope = textInput('scope-new', { required: true, placeholder: 'user.jdoe' });
    const account = textInput('scope-owner', { required: true, placeholder: 'jdoe' });
    replace(
      addBox,
      section('Add a scope', [
        actionForm({
          label: 'Add scope',
          fields: [field('Scope', scope, { grow: true }), field('Owner account', account)],
          submit: async () => {
            await call(`/accounts/${part(account.value.trim())}/scopes/${part(scope.value.trim())}`, {
              method: 'POST',
            });
            return `Scope ${scope.value.trim()} added for ${account.value.trim()}.`;
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
