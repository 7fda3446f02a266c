import { allLines, call, part } from '../lib/api.js';
import { errorBox, h, pageHead, replace } from '../lib/dom.js';
import { field, textInput } from '../lib/forms.js';
import { can } from '../lib/session.js';

/**
 * A subscription made or changed (admins): its filter and the rules it asks for as JSON (checked as
 * typed), comments, lifetime in days, priority, retroactive and dry run for a new one, the state
 * for an existing one. Saving goes to the subscription's page.
 */
export const title = 'Subscription editor';

const EXAMPLE_FILTER = { scope: ['user.jdoe'], pattern: 'run2026.*', did_type: ['DATASET'] };
const EXAMPLE_RULES = [
  { copies: 1, rse_expression: 'tier=1', lifetime: null, activity: 'User Subscriptions', grouping: 'DATASET' },
];

/**
 * A textarea for JSON that says at once whether its text parses.
 * @param {string} id
 * @param {unknown} value
 * @param {(parsed: unknown) => string | undefined} check
 */
const jsonArea = (id, value, check) => {
  const area = h('textarea', {
    id,
    name: id,
    rows: 8,
    spellcheck: false,
    required: true,
    'aria-describedby': `${id}-check`,
  });
  area.value = JSON.stringify(value, null, 2);
  const note = h('small', { id: `${id}-check`, class: 'hint', 'aria-live': 'polite' });
  const validate = () => {
    let problem;
    try {
      problem = check(JSON.parse(area.value));
    } catch (error) {
      problem = `Not JSON: ${error instanceof Error ? error.message : String(error)}`;
    }
    area.setCustomValidity(problem ?? '');
    replace(
      note,
      problem ? h('span', { class: 'bad-text' }, problem) : h('span', { class: 'good-text' }, '✓ valid JSON'),
    );
  };
  area.addEventListener('input', validate);
  validate();
  return { area, note };
};

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [account = '', name = ''] = view.params;
  const editing = Boolean(account);
  if (!can(view.who, editing ? 'updateSubscription' : 'addSubscription')) {
    replace(view.main, h('h1', null, 'For admins'), h('p', null, 'Only admin accounts make or change subscriptions.'));
    return;
  }
  const path = `${part(account)}/${part(name)}`;
  const current = editing ? (await allLines(`/subscriptions/${path}`, 1))[0] : undefined;
  const parsed = (/** @type {string | undefined} */ text, /** @type {unknown} */ fallback) => {
    try {
      return text ? JSON.parse(text) : fallback;
    } catch {
      return fallback;
    }
  };
  const nameInput = textInput('subscription-name', { required: true, value: name, readOnly: editing });
  const accountInput = textInput('subscription-account', {
    required: true,
    value: account || view.who.account,
    readOnly: editing,
  });
  const filter = jsonArea('subscription-filter', parsed(current?.filter, EXAMPLE_FILTER), (value) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? undefined
      : 'The filter is an object: {"scope": [...], "pattern": "..."}',
  );
  const rules = jsonArea('subscription-rules', parsed(current?.replication_rules, EXAMPLE_RULES), (value) =>
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((rule) => rule && typeof rule === 'object' && rule.rse_expression)
      ? undefined
      : 'A list of rules, each with at least rse_expression and copies',
  );
  const comments = textInput('subscription-comments', { value: current?.comments ?? '', maxLength: 4000 });
  const lifetime = textInput('subscription-lifetime', { type: 'number', min: '0', placeholder: 'no end' });
  const priority = textInput('subscription-priority', {
    type: 'number',
    min: '0',
    max: '5',
    value: String(current?.policyid ?? 3),
  });
  const retroactive = h('input', {
    id: 'subscription-retroactive',
    type: 'checkbox',
    checked: Boolean(current?.retroactive),
  });
  const dryRun = h('input', { id: 'subscription-dry-run', type: 'checkbox', checked: Boolean(current?.dry_run) });
  const state = h(
    'select',
    { id: 'subscription-state' },
    ['ACTIVE', 'INACTIVE'].map((value) => h('option', { value, selected: value === current?.state }, value)),
  );
  const outcome = h('div', { 'aria-live': 'assertive' });
  const submit = h(
    'button',
    { type: 'submit', class: 'button primary' },
    editing ? 'Save the subscription' : 'Create the subscription',
  );

  /** @param {SubmitEvent} event */
  const onSubmit = async (event) => {
    event.preventDefault();
    submit.disabled = true;
    replace(outcome);
    const options = {
      filter: JSON.parse(filter.area.value),
      replication_rules: JSON.parse(rules.area.value),
      comments: comments.value.trim() || (editing ? undefined : ''),
      lifetime: lifetime.value ? Number(lifetime.value) : editing ? undefined : null,
      priority: Number(priority.value),
      retroactive: retroactive.checked,
      ...(editing ? { state: state.value } : { dry_run: dryRun.checked }),
    };
    const target = `/subscriptions/${part(accountInput.value.trim())}/${part(nameInput.value.trim())}`;
    try {
      await call(target, { method: editing ? 'PUT' : 'POST', body: { options } });
      view.navigate(
        `#/subscription/${encodeURIComponent(accountInput.value.trim())}/${encodeURIComponent(nameInput.value.trim())}`,
      );
    } catch (error) {
      replace(outcome, errorBox(error));
      submit.disabled = false;
    }
  };

  replace(
    view.main,
    pageHead(
      editing ? `Edit ${name}` : 'New subscription',
      'The filter chooses the DIDs; each rule is made for every one of them.',
      { titleAttributes: { class: 'break' } },
    ),
    h(
      'form',
      { class: 'card wizard', onsubmit: onSubmit },
      h('div', { class: 'row' }, field('Name', nameInput), field('Account', accountInput)),
      h(
        'div',
        { class: 'grid two' },
        h('div', null, field('Filter (JSON)', filter.area), filter.note),
        h('div', null, field('Rules (JSON list)', rules.area), rules.note),
      ),
      h(
        'div',
        { class: 'row' },
        field('Comments', comments, { grow: true }),
        field('Lifetime (days)', lifetime, { hint: editing ? 'empty: unchanged' : 'empty: no end' }),
        field('Priority (0 highest, 5 lowest)', priority),
        editing ? field('State', state) : null,
      ),
      h(
        'div',
        { class: 'field checkbox' },
        h('label', { for: retroactive.id }, retroactive, ' Retroactive: DIDs that already exist count too'),
      ),
      editing
        ? null
        : h(
            'div',
            { class: 'field checkbox' },
            h('label', { for: dryRun.id }, dryRun, ' Dry run: record what it would make, make nothing'),
          ),
      outcome,
      h('div', { class: 'form-actions' }, submit),
    ),
  );
};
