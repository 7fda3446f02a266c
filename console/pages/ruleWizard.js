import { allLines, didPath, getJson, part, query } from '../lib/api.js';
import {
  badge,
  debounce,
  didLink,
  errorBox,
  formatBytes,
  h,
  pageHead,
  progressBar,
  replace,
  rseLink,
  table,
} from '../lib/dom.js';
import { isAdminAccount } from '../lib/ruleViews.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * Ask for a copy: a replication rule in one form, each step checked as it is typed. The DIDs
 * (their type and size), the RSE expression (the RSEs it selects, with the free quota of the
 * rule's account on each, read again as they change), copies, lifetime, grouping, asynchronous
 * injection and a comment. The result is the new rule's page.
 */
export const title = 'New rule';

const LIFETIMES = [
  ['', 'No end'],
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '1 week'],
  ['2592000', '30 days'],
  ['31536000', '1 year'],
  ['custom', 'Other (seconds)'],
];

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  // The groupings the API takes (its OpenAPI document); Rucio's default, DATASET, is checked.
  const groupings = await enumOf(ENUMS.grouping);
  const checkedGrouping = groupings.includes('DATASET') ? 'DATASET' : groupings[0];
  const dids = h('textarea', {
    id: 'rule-dids',
    name: 'dids',
    rows: 3,
    required: true,
    spellcheck: false,
    placeholder: 'scope:name, one per line',
    'aria-describedby': 'rule-dids-help',
  });
  dids.value = view.query.getAll('did').join('\n');
  const didsCheck = h('div', { class: 'check', 'aria-live': 'polite' });
  const expression = h('input', {
    id: 'rule-expression',
    name: 'rse_expression',
    required: true,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'SARA_DISK, tier=1, CERN_DISK|SARA_DISK',
    'aria-describedby': 'rule-expression-help',
  });
  expression.value = view.query.get('rse_expression') ?? '';
  const expressionCheck = h('div', { class: 'check', 'aria-live': 'polite' });
  const copies = h('input', {
    id: 'rule-copies',
    name: 'copies',
    type: 'number',
    min: '1',
    max: '100',
    value: '1',
    required: true,
  });
  const lifetime = h(
    'select',
    { id: 'rule-lifetime', name: 'lifetime' },
    LIFETIMES.map(([value, label]) => h('option', { value }, label)),
  );
  const customLifetime = h('input', {
    id: 'rule-lifetime-seconds',
    name: 'lifetime_seconds',
    type: 'number',
    min: '1',
    hidden: true,
    'aria-label': 'Lifetime in seconds',
  });
  const grouping = groupings.map((value) =>
    h('input', {
      type: 'radio',
      name: 'grouping',
      id: `rule-grouping-${value}`,
      value,
      checked: value === checkedGrouping,
    }),
  );
  const asynchronous = h('input', { id: 'rule-async', name: 'asynchronous', type: 'checkbox' });
  const comment = h('input', { id: 'rule-comment', name: 'comment', maxLength: 250, autocomplete: 'off' });
  const account = h('input', {
    id: 'rule-account',
    name: 'account',
    value: view.who.account,
    required: true,
    readOnly: !can(view.who, 'addRuleForOthers'),
    autocomplete: 'off',
  });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Create the rule');
  const outcome = h('div', { 'aria-live': 'assertive' });

  /** The DIDs as checked: size in bytes, or the error for each line. */
  let checkedBytes = 0;
  // Checks run as the person types: only the answer to the latest text is shown, so an older,
  // slower answer (a DataIdentifierNotFound for a name since corrected) never replaces it.
  let didsRound = 0;
  let expressionRound = 0;

  const checkDids = async () => {
    const round = ++didsRound;
    const names = didNames(dids.value);
    if (names.length === 0) {
      replace(didsCheck);
      checkedBytes = 0;
      return;
    }
    const found = await Promise.all(
      names.map(async ({ scope, name }) => {
        try {
          return { scope, name, did: await getJson(`/dids/${didPath(scope, name)}`) };
        } catch (error) {
          return { scope, name, error };
        }
      }),
    );
    if (round !== didsRound) return;
    checkedBytes = found.reduce((sum, item) => sum + (item.did?.bytes ?? 0), 0);
    replace(
      didsCheck,
      h(
        'ul',
        { class: 'plain-list' },
        found.map((item) =>
          h(
            'li',
            null,
            item.did
              ? [
                  h('span', { class: 'ok-mark', 'aria-hidden': 'true' }, '✓ '),
                  didLink(item.scope, item.name),
                  ' ',
                  badge(item.did.type),
                  ` ${formatBytes(item.did.bytes)}`,
                  item.did.length ? `, ${item.did.length} file${item.did.length === 1 ? '' : 's'}` : '',
                ]
              : [
                  h('span', { class: 'bad-mark', 'aria-hidden': 'true' }, '✗ '),
                  `${item.scope}:${item.name}: `,
                  item.error instanceof Error ? item.error.message : 'not found',
                ],
          ),
        ),
      ),
    );
    await checkExpression();
  };

  const checkExpression = async () => {
    const round = ++expressionRound;
    const text = expression.value.trim();
    if (!text) {
      replace(
        expressionCheck,
        h('p', { class: 'muted' }, 'The RSEs it selects and your free quota on each show here.'),
      );
      return;
    }
    try {
      const owner = account.value.trim() || view.who.account;
      const [rses, usage, unbound] = await Promise.all([
        allLines(`/rses/${query({ expression: text })}`, 1000),
        allLines(`/accounts/${part(owner)}/usage/local`).catch(() => []),
        owner === view.who.account ? Promise.resolve(view.who.admin) : isAdminAccount(owner),
      ]);
      if (round !== expressionRound) return;
      if (unbound) {
        replace(
          expressionCheck,
          h(
            'p',
            null,
            `Selects ${rses.length} RSE${rses.length === 1 ? '' : 's'}: `,
            rses.map((/** @type {any} */ row, /** @type {number} */ index) => [
              index > 0 ? ', ' : '',
              rseLink(row.rse),
            ]),
            '.',
          ),
          h(
            'p',
            { class: 'alert info', id: 'quota-note' },
            `${owner} is an admin account: its rules are held to no quota (what it already stores is on its account page).`,
          ),
        );
        return;
      }
      /** @type {Map<string, any>} */
      const usageByRse = new Map(usage.map((row) => [row.rse, row]));
      const needed = checkedBytes;
      replace(
        expressionCheck,
        h(
          'p',
          null,
          `Selects ${rses.length} RSE${rses.length === 1 ? '' : 's'}`,
          needed ? `; the rule needs ${formatBytes(needed)} on each copy’s RSE` : '',
          '.',
        ),
        table(
          ['RSE', 'Quota', 'Used', 'Free', ''],
          rses.map(({ rse }) => {
            const row = usageByRse.get(rse);
            const limit = row?.bytes_limit ?? null;
            const free = limit === null ? null : Math.max(0, limit - (row?.bytes ?? 0));
            const fits = free === null ? null : free >= needed;
            return [
              rseLink(rse),
              limit === null ? h('span', { class: 'muted' }, 'none') : formatBytes(limit),
              formatBytes(row?.bytes ?? 0),
              free === null
                ? '–'
                : h('span', { class: fits ? 'good-text' : 'bad-text' }, formatBytes(free), fits ? '' : ' (too little)'),
              limit ? progressBar((row?.bytes ?? 0) / limit, `${rse}: quota used`) : '',
            ];
          }),
          { empty: 'No RSE matches this expression.', numeric: [1, 2, 3], caption: 'RSEs selected, with free quota' },
        ),
      );
    } catch (error) {
      if (round === expressionRound) replace(expressionCheck, errorBox(error));
    }
  };

  const laterDids = debounce(() => void checkDids(), 400);
  const laterExpression = debounce(() => void checkExpression(), 300);
  // A refusal of the last submission is about what was sent: it goes once the form changes.
  const forgetOutcome = () => replace(outcome);
  dids.addEventListener('input', laterDids);
  expression.addEventListener('input', laterExpression);
  account.addEventListener('input', laterExpression);
  for (const control of [dids, expression, account, copies, comment]) control.addEventListener('input', forgetOutcome);
  lifetime.addEventListener('change', () => {
    customLifetime.hidden = lifetime.value !== 'custom';
    customLifetime.required = lifetime.value === 'custom';
  });

  /** @param {SubmitEvent} event */
  const onSubmit = async (event) => {
    event.preventDefault();
    replace(outcome);
    const names = didNames(dids.value);
    if (names.length === 0) {
      replace(outcome, errorBox(new Error('Name at least one DID as scope:name.')));
      return;
    }
    const seconds =
      lifetime.value === 'custom' ? Number(customLifetime.value) : lifetime.value ? Number(lifetime.value) : null;
    const groupingValue = grouping.find((input) => input.checked)?.value ?? checkedGrouping;
    /** @type {Record<string, unknown>} */
    const body = {
      dids: names,
      copies: Number(copies.value),
      rse_expression: expression.value.trim(),
      grouping: groupingValue,
      account: account.value.trim(),
      asynchronous: asynchronous.checked,
      ...(seconds ? { lifetime: seconds } : {}),
      ...(comment.value.trim() ? { comment: comment.value.trim() } : {}),
    };
    submit.disabled = true;
    try {
      const ids = await getJson('/rules/', { method: 'POST', body });
      view.navigate(
        `#/rule/${encodeURIComponent(ids[0])}${ids.length > 1 ? query({ also: ids.slice(1).join(',') }) : ''}`,
      );
    } catch (error) {
      replace(outcome, errorBox(error));
      submit.disabled = false;
    }
  };

  const step = (
    /** @type {number} */ number,
    /** @type {string} */ legend,
    /** @type {import('../lib/dom.js').Children} */ content,
  ) =>
    h(
      'fieldset',
      { class: 'step' },
      h('legend', null, h('span', { class: 'step-number', 'aria-hidden': 'true' }, String(number)), legend),
      content,
    );

  replace(
    view.main,
    pageHead(
      'Ask for a copy',
      'A replication rule keeps copies of data on the storage elements you choose; the service copies what is missing and keeps it while the rule lives.',
    ),
    h(
      'form',
      { class: 'card wizard', onsubmit: onSubmit },
      step(1, 'What', [
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'rule-dids' }, 'Data identifiers'),
          dids,
          h(
            'small',
            { id: 'rule-dids-help', class: 'hint' },
            'scope:name, one per line; datasets and containers bring their files.',
          ),
        ),
        didsCheck,
      ]),
      step(2, 'Where', [
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'rule-expression' }, 'RSE expression'),
          expression,
          h(
            'small',
            { id: 'rule-expression-help', class: 'hint' },
            'An RSE name, an attribute (tier=1), or a combination with | (or), & (and), \\ (without).',
          ),
        ),
        expressionCheck,
      ]),
      step(3, 'How', [
        h(
          'div',
          { class: 'row' },
          h('div', { class: 'field' }, h('label', { for: 'rule-copies' }, 'Copies'), copies),
          h('div', { class: 'field' }, h('label', { for: 'rule-lifetime' }, 'Lifetime'), lifetime, customLifetime),
          h('div', { class: 'field' }, h('label', { for: 'rule-account' }, 'Account'), account),
        ),
        h(
          'fieldset',
          { class: 'field radios' },
          h('legend', null, 'Grouping'),
          grouping.map((input) =>
            h(
              'label',
              { for: input.id, class: 'radio' },
              input,
              ' ',
              { DATASET: 'Each dataset whole on one RSE', ALL: 'Everything on one RSE', NONE: 'File by file' }[
                input.value
              ] ?? input.value,
            ),
          ),
        ),
        h(
          'div',
          { class: 'field checkbox' },
          h(
            'label',
            { for: 'rule-async' },
            asynchronous,
            ' Asynchronous: the judge creates the locks in the background (large collections)',
          ),
        ),
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'rule-comment' }, 'Comment ', h('span', { class: 'muted' }, '(optional)')),
          comment,
        ),
      ]),
      outcome,
      h('div', { class: 'form-actions' }, submit),
    ),
  );
  await checkDids();
  await checkExpression();
  // Quotas move as other rules fill them: read them again while the page is open.
  view.every(5000, checkExpression);
  (dids.value ? expression : dids).focus();
};

/**
 * `scope:name` lines (commas too) as DIDs.
 * @param {string} text
 */
const didNames = (text) =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line.includes(':'))
    .map((line) => {
      const at = line.indexOf(':');
      return { scope: line.slice(0, at), name: line.slice(at + 1) };
    });
