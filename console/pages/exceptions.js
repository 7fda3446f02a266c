import { allLines, call, part } from '../lib/api.js';
import {
  accountLink,
  badge,
  confirmDialog,
  didLink,
  errorBox,
  formatTime,
  h,
  pageHead,
  parseTimeInput,
  replace,
  section,
  table,
  timeElement,
  timeInput,
} from '../lib/dom.js';
import { actionForm, field, resultBox, textInput } from '../lib/forms.js';
import { can } from '../lib/session.js';

/**
 * Lifetime exceptions: a DID kept past the lifetime policy until a date, asked by any account and
 * approved or rejected by admins (Rucio's generic policy).
 */
export const title = 'Lifetime exceptions';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const list = h('div', { id: 'exception-list' });
  const askBox = h('div', { id: 'exception-ask' });
  replace(
    view.main,
    pageHead('Lifetime exceptions', 'DIDs kept past the lifetime policy until a date, once an admin approves.'),
    list,
    askBox,
  );
  const decider = can(view.who, 'decideLifetimeException');

  /** @param {string} [said] */
  const showList = async (said) => {
    const found = await allLines('/lifetime_exceptions/', 5000).catch(() => []);
    const result = resultBox(said);
    /** @param {any} row @param {'A' | 'R'} state */
    const decide = async (row, state) => {
      const answer = await confirmDialog({
        title: state === 'A' ? 'Approve this exception?' : 'Reject this exception?',
        body: h(
          'p',
          null,
          `${row.scope}:${row.name}, asked by ${row.account}`,
          row.expires_at ? `, until ${formatTime(row.expires_at)}` : '',
          '.',
        ),
        confirm: state === 'A' ? 'Approve' : 'Reject',
        danger: state === 'R',
      });
      if (!answer) return;
      try {
        await call(`/lifetime_exceptions/${part(row.id)}`, { method: 'PUT', body: { state } });
        await showList(state === 'A' ? 'Approved.' : 'Rejected.');
      } catch (error) {
        replace(result, errorBox(error));
      }
    };
    replace(
      list,
      section(`${found.length} exception${found.length === 1 ? '' : 's'}`, [
        table(
          ['DID', 'Type', 'Asked by', 'State', 'Comments', 'Until', 'Asked', ''],
          found.map((row) => [
            didLink(row.scope, row.name),
            badge(row.did_type),
            accountLink(row.account),
            badge(row.state),
            h('span', { class: 'small break' }, row.comments ?? ''),
            timeElement(row.expires_at),
            timeElement(row.created_at),
            decider && row.state === 'WAITING'
              ? h(
                  'span',
                  { class: 'row-actions' },
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button small',
                      'aria-label': `Approve the exception for ${row.scope}:${row.name}`,
                      onclick: () => decide(row, 'A'),
                    },
                    'Approve',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button small danger',
                      'aria-label': `Reject the exception for ${row.scope}:${row.name}`,
                      onclick: () => decide(row, 'R'),
                    },
                    'Reject',
                  ),
                )
              : '',
          ]),
          { empty: 'No exception asked.', caption: 'Lifetime exceptions' },
        ),
        result,
      ]),
    );
  };
  await showList();

  const dids = h('textarea', {
    id: 'exception-dids',
    rows: 2,
    required: true,
    spellcheck: false,
    placeholder: 'scope:name, one per line',
  });
  const comments = textInput('exception-comments', { required: true, placeholder: 'why it must stay' });
  const until = timeInput('exception-until', '', { required: true, 'aria-describedby': 'exception-until-help' });
  replace(
    askBox,
    section('Ask for an exception', [
      actionForm({
        label: 'Ask',
        fields: [
          field('Data identifiers', dids, { grow: true }),
          field('Reason', comments, { grow: true }),
          h(
            'div',
            { class: 'field' },
            h('label', { for: until.id }, 'Keep until (UTC)'),
            until,
            h('small', { id: 'exception-until-help', class: 'hint' }, 'ISO 8601: 2027-06-30T00:00:00Z'),
          ),
        ],
        submit: async () => {
          const time = parseTimeInput(until.value);
          if (!(time instanceof Date)) throw time ?? new Error('Say until when.');
          const list = dids.value
            .split(/[\n,]/)
            .map((line) => line.trim())
            .filter((line) => line.includes(':'))
            .map((line) => ({ scope: line.slice(0, line.indexOf(':')), name: line.slice(line.indexOf(':') + 1) }));
          await call('/lifetime_exceptions/', {
            method: 'POST',
            body: { dids: list, comments: comments.value.trim(), expires_at: time.toISOString().slice(0, 19) },
          });
          return `Asked for ${list.length} DID${list.length === 1 ? '' : 's'}: an admin approves or rejects it.`;
        },
        after: async (said) => {
          await showList(said);
        },
      }),
    ]),
  );
};
