import { allLines, call, getJson, query } from '../lib/api.js';
import { accountLink, badge, didLink, h, pageHead, replace, rseLink, section, table, timeElement } from '../lib/dom.js';
import { actionForm, field, resultBox, textInput } from '../lib/forms.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * Replicas in trouble: those declared bad (the necromancer copies them again or marks them lost),
 * those called suspicious (several reads failed), and the forms to declare either: anyone may call
 * a replica suspicious, root declares one bad (Rucio's generic policy).
 */
export const title = 'Bad and suspicious replicas';

const LIMIT = 500;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const state = view.query.get('state') ?? 'BAD';
  // The states as the API's document declares them (the listing also takes Rucio's letters).
  const states = await enumOf(ENUMS.badReplicaState);
  const rse = view.query.get('rse') ?? '';
  const badBox = h('div', { id: 'bad-replicas' });
  const suspiciousBox = h('div', { id: 'suspicious-replicas' });
  const declareBox = h('div', { id: 'declare-replicas' });
  const stateSelect = h(
    'select',
    { id: 'bad-state' },
    states.map((value) => h('option', { value, selected: value === state }, value)),
  );
  const rseInput = textInput('bad-rse', { value: rse, placeholder: 'any RSE' });
  replace(
    view.main,
    pageHead(
      'Bad and suspicious replicas',
      'Copies that failed to read or were found broken, and what became of them.',
    ),
    h(
      'form',
      {
        class: 'card search-form',
        role: 'search',
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          view.navigate(`#/replicas${query({ state: stateSelect.value, rse: rseInput.value.trim() })}`);
        },
      },
      field('Declared as', stateSelect),
      field('RSE', rseInput, { grow: true }),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Show')),
    ),
    badBox,
    suspiciousBox,
    declareBox,
  );
  const showBad = async () => {
    const rows = await allLines(`/replicas/bad/states${query({ state, rse, limit: LIMIT })}`, LIMIT).catch(() => []);
    replace(
      badBox,
      section(
        `Declared ${stateSelect.selectedOptions[0]?.textContent ?? state} (${rows.length >= LIMIT ? `first ${LIMIT}` : rows.length})`,
        table(
          ['File', 'RSE', 'State', 'Reason', 'By', 'Declared'],
          rows.map((row) => [
            didLink(row.scope, row.name),
            rseLink(row.rse),
            badge(row.state),
            h('span', { class: 'small break' }, row.reason ?? ''),
            row.account ? accountLink(row.account) : '–',
            timeElement(row.created_at),
          ]),
          { empty: 'None.', caption: 'Bad replicas' },
        ),
      ),
    );
  };
  const showSuspicious = async () => {
    const rows = await getJson(`/replicas/suspicious${query({ rse_expression: rse })}`).catch(() => []);
    replace(
      suspiciousBox,
      section(
        'Suspicious (reads that failed recently)',
        table(
          ['File', 'RSE', 'Times', 'Since'],
          rows.map((/** @type {any} */ row) => [
            didLink(row.scope, row.name),
            rseLink(row.rse),
            String(row.cnt ?? 1),
            timeElement(row.created_at),
          ]),
          { empty: 'None.', numeric: [2], caption: 'Suspicious replicas' },
        ),
      ),
    );
  };
  await Promise.all([showBad(), showSuspicious()]);

  const pfns = h('textarea', {
    id: 'declare-pfns',
    rows: 3,
    required: true,
    spellcheck: false,
    placeholder: 'the replica’s URL (PFN), one per line',
  });
  const reason = textInput('declare-reason', { required: true, placeholder: 'checksum mismatch on read' });
  const kind = h(
    'select',
    { id: 'declare-kind' },
    h('option', { value: 'suspicious' }, 'suspicious (a read failed)'),
    can(view.who, 'declareBad') ? h('option', { value: 'bad' }, 'bad (broken: copy it again)') : null,
  );
  replace(
    declareBox,
    section('Declare replicas', [
      actionForm({
        label: 'Declare',
        fields: [
          field('Replicas (PFNs)', pfns, { grow: true }),
          field('As', kind),
          field('Reason', reason, { grow: true }),
        ],
        submit: async () => {
          const list = pfns.value
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean);
          if (kind.value === 'bad')
            await call('/replicas/bad/pfns', {
              method: 'POST',
              body: { pfns: list, state: 'BAD', reason: reason.value.trim() },
            });
          else {
            const refused = await getJson('/replicas/suspicious', {
              method: 'POST',
              body: { pfns: list, reason: reason.value.trim() },
            });
            if (Array.isArray(refused) && refused.length > 0)
              throw new Error(`Not declared: ${refused.map((item) => JSON.stringify(item)).join(', ')}`);
          }
          return `${list.length} replica${list.length === 1 ? '' : 's'} declared ${kind.value}.`;
        },
        after: async (said) => {
          await Promise.all([showBad(), showSuspicious()]);
          declareBox.querySelector('.form-result')?.replaceChildren(resultBox(said));
        },
      }),
    ]),
  );
};
