import { call, getJson, part } from './api.js';
import { confirmDialog, errorBox, formatTime, h, notice, parseTimeInput, timeInput } from './dom.js';
import { can } from './session.js';

/**
 * What can be done to a rule, for the accounts the API lets do it (Rucio's generic policy: admins
 * for every change): extend or end its lifetime, boost it (the repairer retries its stuck locks at
 * once, back-off skipped: Rucio's `boost_rule`), lock or unlock it, approve or deny it while it
 * waits for approval, and delete it. Each is confirmed in a dialog; its result is given to `done`
 * to be shown where the action was taken.
 */

/** @typedef {{ done: (result: HTMLElement) => void }} ActionHooks */

/**
 * @param {string} ruleId
 * @param {Record<string, unknown>} options
 */
const updateRule = (ruleId, options) => getJson(`/rules/${part(ruleId)}`, { method: 'PUT', body: { options } });

/**
 * Runs an action and reports its outcome.
 * @param {ActionHooks} hooks
 * @param {() => Promise<unknown>} action
 * @param {string} success
 */
const run = async (hooks, action, success) => {
  try {
    await action();
    hooks.done(notice('good', success));
  } catch (error) {
    hooks.done(errorBox(error));
  }
};

const LIFETIMES = [
  ['86400', 'one more day from now'],
  ['604800', 'one more week from now'],
  ['2592000', '30 days from now'],
  ['31536000', 'a year from now'],
  ['until', 'until a date (UTC)'],
  ['never', 'no end'],
];

/**
 * @param {any} rule
 * @param {ActionHooks} hooks
 */
const extendLifetime = async (rule, hooks) => {
  const choice = h(
    'select',
    { id: 'lifetime-choice', name: 'choice' },
    LIFETIMES.map(([value, label]) => h('option', { value }, label)),
  );
  const until = timeInput('lifetime-until', '', { name: 'until', 'aria-describedby': 'lifetime-until-help' });
  const untilField = h(
    'div',
    { class: 'field', hidden: true },
    h('label', { for: 'lifetime-until' }, 'Expires at (ISO 8601, UTC)'),
    until,
    h('small', { id: 'lifetime-until-help', class: 'hint' }, 'For example 2027-01-31T12:00:00Z'),
  );
  choice.addEventListener('change', () => {
    untilField.hidden = choice.value !== 'until';
    until.required = choice.value === 'until';
  });
  until.addEventListener('input', () => {
    const parsed = parseTimeInput(until.value);
    until.setCustomValidity(parsed instanceof Error ? parsed.message : '');
  });
  const answer = await confirmDialog({
    title: 'Change the rule’s lifetime',
    body: h(
      'p',
      null,
      'It expires ',
      rule.expires_at ? `at ${formatTime(rule.expires_at)}` : 'never',
      '; when it does, the cleaner deletes it and its locks.',
    ),
    fields: [h('div', { class: 'field' }, h('label', { for: 'lifetime-choice' }, 'New lifetime'), choice), untilField],
    confirm: 'Set the lifetime',
  });
  if (!answer) return;
  /** @type {number | null} */
  let seconds = null;
  let end = '';
  if (choice.value === 'until') {
    const time = parseTimeInput(until.value);
    if (!(time instanceof Date)) return;
    seconds = Math.max(1, Math.round((time.getTime() - Date.now()) / 1000));
    end = formatTime(time);
  } else if (choice.value !== 'never') {
    seconds = Number(choice.value);
    end = formatTime(new Date(Date.now() + seconds * 1000));
  }
  await run(
    hooks,
    () => updateRule(rule.id, { lifetime: seconds }),
    seconds === null ? 'The rule has no end now.' : `The rule now expires at ${end}.`,
  );
};

/**
 * @param {any} rule
 * @param {ActionHooks} hooks
 */
const boost = async (rule, hooks) => {
  const answer = await confirmDialog({
    title: 'Boost this rule?',
    body: h(
      'p',
      null,
      `The repairer takes the rule at once, without waiting for its back-off, and retries its ${rule.locks_stuck_cnt} stuck lock${rule.locks_stuck_cnt === 1 ? '' : 's'} from the sources it can find.`,
    ),
    confirm: 'Boost',
  });
  if (answer)
    await run(hooks, () => updateRule(rule.id, { boost_rule: true }), 'Boosted: the repairer retries it now.');
};

/**
 * Asks to approve or deny a rule waiting for approval, with a reason for a denial: the rule's
 * update options, or null when the dialog was cancelled.
 * @param {boolean} approve
 * @param {import('./dom.js').Children} body what the dialog says of the rule and of the decision
 * @returns {Promise<Record<string, unknown> | null>}
 */
export const askApproval = async (approve, body) => {
  const reason = h('input', { id: 'deny-reason', name: 'reason', maxLength: 250, autocomplete: 'off' });
  const answer = await confirmDialog({
    title: approve ? 'Approve this rule?' : 'Deny this rule?',
    body,
    fields: approve
      ? null
      : h('div', { class: 'field' }, h('label', { for: 'deny-reason' }, 'Reason (optional)'), reason),
    confirm: approve ? 'Approve' : 'Deny',
    danger: !approve,
  });
  if (!answer) return null;
  return approve
    ? { approve: true }
    : { approve: false, ...(reason.value.trim() ? { comment: reason.value.trim() } : {}) };
};

/**
 * @param {any} rule
 * @param {ActionHooks} hooks
 * @param {boolean} approve
 */
const decide = async (rule, hooks, approve) => {
  const options = await askApproval(
    approve,
    h(
      'p',
      null,
      approve
        ? 'The rule starts placing its copies at once, held to its owner’s quotas.'
        : 'A denied rule is deleted; the reason stays in its history.',
    ),
  );
  if (options)
    await run(hooks, () => updateRule(rule.id, options), approve ? 'Approved.' : 'Denied: the rule is deleted.');
};

/**
 * @param {any} rule
 * @param {ActionHooks} hooks
 */
const remove = async (rule, hooks) => {
  const purge = h('input', { id: 'delete-purge', name: 'purge', type: 'checkbox', checked: rule.purge_replicas });
  const answer = await confirmDialog({
    title: 'Delete this rule?',
    body: [
      h(
        'p',
        null,
        'The rule expires within the hour (sooner if it already would); the cleaner then deletes it and releases its locks. Replicas no other rule keeps may then be deleted by the reaper.',
      ),
      rule.locked
        ? h('p', { class: 'bad-text' }, 'The rule is locked: unlock it first, or the deletion is refused.')
        : null,
    ],
    fields: h(
      'div',
      { class: 'field checkbox' },
      h('label', { for: 'delete-purge' }, purge, ' Delete its replicas at once when released (purge)'),
    ),
    confirm: 'Delete the rule',
    danger: true,
  });
  if (!answer) return;
  await run(
    hooks,
    () => call(`/rules/${part(rule.id)}`, { method: 'DELETE', body: { purge_replicas: purge.checked } }),
    'Deletion asked: the rule expires within the hour and the cleaner deletes it then.',
  );
};

/**
 * @param {any} rule
 * @param {ActionHooks} hooks
 */
const toggleLock = async (rule, hooks) => {
  const answer = await confirmDialog({
    title: rule.locked ? 'Unlock this rule?' : 'Lock this rule?',
    body: h(
      'p',
      null,
      rule.locked
        ? 'An unlocked rule can be deleted, and its DID can expire.'
        : 'A locked rule cannot be deleted, and keeps its DID from expiring.',
    ),
    confirm: rule.locked ? 'Unlock' : 'Lock',
  });
  if (answer)
    await run(hooks, () => updateRule(rule.id, { locked: !rule.locked }), rule.locked ? 'Unlocked.' : 'Locked.');
};

/**
 * The rule's action bar: only the actions the account may take, each button named for what it does.
 * @param {any} rule
 * @param {import('../app.js').View} view
 * @param {ActionHooks} hooks
 */
export const ruleActions = (rule, view, hooks) => {
  const buttons = [];
  const button = (/** @type {string} */ label, /** @type {() => unknown} */ onclick, danger = false) =>
    h('button', { type: 'button', class: `button${danger ? ' danger' : ''}`, onclick }, label);
  if (rule.state === 'WAITING_APPROVAL' && can(view.who, 'approveRule')) {
    buttons.push(button('Approve', () => decide(rule, hooks, true)));
    buttons.push(button('Deny', () => decide(rule, hooks, false), true));
  }
  if (can(view.who, 'updateRule')) {
    buttons.push(button('Extend lifetime', () => extendLifetime(rule, hooks)));
    if (rule.state === 'STUCK' || rule.state === 'SUSPENDED' || rule.locks_stuck_cnt > 0)
      buttons.push(button('Boost', () => boost(rule, hooks)));
    buttons.push(button(rule.locked ? 'Unlock' : 'Lock', () => toggleLock(rule, hooks)));
  }
  if (can(view.who, 'deleteRule')) buttons.push(button('Delete', () => remove(rule, hooks), true));
  if (buttons.length === 0) return null;
  return h('div', { class: 'toolbar action-bar', role: 'group', 'aria-label': 'Actions on the rule' }, buttons);
};
