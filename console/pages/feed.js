import { call, lines, query } from '../lib/api.js';
import { errorBox, formatCount, h, progressBar, replace, section } from '../lib/dom.js';
import { timelineEntry, timelineList } from '../lib/timeline.js';

/**
 * The auditors' page: the global event feed filtered by account, type and time, a page at a time
 * (newest pages follow live when asked), links to the histories of any subject, and `audit verify`
 * run from the browser with its progress and verdict.
 */
export const title = 'Audit';

const PAGE = 100;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const filters = {
    account: view.query.get('account') ?? '',
    type: view.query.get('type') ?? '',
    since: view.query.get('since') ?? '',
    until: view.query.get('until') ?? '',
  };
  const account = h('input', { id: 'feed-account', value: filters.account, autocomplete: 'off', placeholder: 'any' });
  const type = h('input', {
    id: 'feed-type',
    value: filters.type,
    autocomplete: 'off',
    placeholder: 'RuleAdded, DidCreated',
    spellcheck: false,
  });
  const since = h('input', {
    id: 'feed-since',
    type: 'datetime-local',
    step: '1',
    value: filters.since.replace(/Z$/, ''),
  });
  const until = h('input', {
    id: 'feed-until',
    type: 'datetime-local',
    step: '1',
    value: filters.until.replace(/Z$/, ''),
  });
  const follow = h('input', { id: 'feed-follow', type: 'checkbox' });
  const list = timelineList('Events');
  const more = h('button', { type: 'button', class: 'button small' }, 'Next page');
  const count = h('span', { class: 'muted' });

  /** @param {string} value */
  const utc = (value) => (value ? `${value.length === 16 ? `${value}:00` : value}Z` : '');
  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    view.navigate(
      `#/audit${query({ account: account.value.trim(), type: type.value.replace(/\s+/g, ''), since: utc(since.value), until: utc(until.value) })}`,
    );
  };

  const subjectKind = h(
    'select',
    { id: 'jump-kind' },
    ['did', 'rule', 'rse', 'account', 'subscription'].map((kind) =>
      h('option', { value: kind }, kind === 'did' ? 'DID (scope:name)' : kind),
    ),
  );
  const subjectId = h('input', {
    id: 'jump-id',
    required: true,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'user.jdoe:dataset1',
  });
  /** @param {SubmitEvent} event */
  const onJump = (event) => {
    event.preventDefault();
    const value = subjectId.value.trim();
    if (subjectKind.value === 'did') {
      const at = value.indexOf(':');
      view.navigate(
        `#/history/did/${encodeURIComponent(value.slice(0, at))}/${encodeURIComponent(value.slice(at + 1))}`,
      );
    } else view.navigate(`#/history/${subjectKind.value}/${encodeURIComponent(value)}`);
  };

  const verifyBox = h('div', { id: 'verify-result', 'aria-live': 'polite' });
  const verifyButton = h('button', { type: 'button', class: 'button', id: 'verify-start' }, 'Verify the event log');

  replace(
    view.main,
    h(
      'div',
      { class: 'page-head' },
      h(
        'div',
        null,
        h('h1', null, 'Audit'),
        h(
          'p',
          { class: 'muted' },
          'Every change is an event: who made it, when, from which request. Filter the feed, open any subject’s history, check that nothing was altered.',
        ),
      ),
    ),
    h(
      'div',
      { class: 'grid two' },
      section(
        'History of one subject',
        h(
          'form',
          { class: 'form row', onsubmit: onJump },
          h('div', { class: 'field' }, h('label', { for: 'jump-kind' }, 'Kind'), subjectKind),
          h('div', { class: 'field grow' }, h('label', { for: 'jump-id' }, 'Name or id'), subjectId),
          h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Open')),
        ),
      ),
      section('Tamper evidence', [
        h(
          'p',
          { class: 'muted' },
          'Recomputes the hash chain of every stream from the first event on; names the first broken link, if any.',
        ),
        h('div', { class: 'inline' }, verifyButton),
        verifyBox,
      ]),
    ),
    h(
      'form',
      { class: 'card search-form', onsubmit: onSubmit, 'aria-label': 'Filter the feed' },
      h('div', { class: 'field' }, h('label', { for: 'feed-account' }, 'Account'), account),
      h('div', { class: 'field grow' }, h('label', { for: 'feed-type' }, 'Event types'), type),
      h('div', { class: 'field' }, h('label', { for: 'feed-since' }, 'Since (UTC)'), since),
      h('div', { class: 'field' }, h('label', { for: 'feed-until' }, 'Until (UTC)'), until),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Filter')),
    ),
    section(
      'Feed',
      [
        h(
          'div',
          { class: 'toolbar' },
          count,
          h('span', { class: 'spacer' }),
          h('label', { for: 'feed-follow', class: 'checkbox' }, follow, ' Follow new events'),
        ),
        list,
        h('div', { class: 'pager' }, more),
      ],
      { id: 'feed' },
    ),
  );

  let after = 0;
  let shown = 0;
  let finished = false;
  const load = async () => {
    more.disabled = true;
    try {
      let got = 0;
      for await (const event of lines(`/audit/events${query({ ...filters, after: after || '', limit: PAGE })}`, {
        signal: view.signal,
      })) {
        list.appendChild(timelineEntry(event));
        after = event.position;
        got += 1;
      }
      shown += got;
      finished = got < PAGE;
      more.hidden = finished;
      replace(count, `${formatCount(shown)} event${shown === 1 ? '' : 's'}${finished ? '' : ' so far'}`);
    } catch (error) {
      list.appendChild(h('li', null, errorBox(error)));
      more.hidden = true;
    }
    more.disabled = false;
  };
  more.addEventListener('click', () => void load());
  await load();
  view.every(3000, async () => {
    if (follow.checked && finished) await load();
  });

  verifyButton.addEventListener('click', async () => {
    verifyButton.disabled = true;
    replace(verifyBox, progressBar(0, 'Verification progress'));
    try {
      const response = await call('/audit/verify', { method: 'POST', signal: view.signal });
      if (!response.body) throw new Error('No answer.');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        for (const part of parts.filter(Boolean)) showVerifyLine(verifyBox, JSON.parse(part));
      }
    } catch (error) {
      replace(verifyBox, errorBox(error));
    }
    verifyButton.disabled = false;
  });
};

/**
 * @param {HTMLElement} target
 * @param {any} line
 */
const showVerifyLine = (target, line) => {
  if (line.progress) {
    const { events, position, head } = line.progress;
    replace(
      target,
      progressBar(head > 0 ? position / head : 1, 'Verification progress'),
      h(
        'p',
        { class: 'muted small' },
        `${formatCount(events)} events checked, position ${formatCount(position)} of ${formatCount(head)}`,
      ),
    );
    return;
  }
  const verdict = line.verdict;
  if (!verdict) return;
  replace(
    target,
    verdict.holds
      ? h(
          'div',
          { class: 'alert good', role: 'status', id: 'verify-verdict' },
          h('strong', null, 'Every chain holds. '),
          `${formatCount(verdict.events)} events in ${formatCount(verdict.streams)} streams checked in ${verdict.seconds.toFixed(1)} s${verdict.unhashed ? `; ${formatCount(verdict.unhashed)} written before hashing` : ''}.`,
        )
      : h(
          'div',
          { class: 'alert bad', role: 'alert', id: 'verify-verdict' },
          h('strong', null, 'Broken. '),
          `Stream ${verdict.first_break.stream}, revision ${verdict.first_break.revision}, position ${verdict.first_break.position}: ${verdict.first_break.detail}`,
        ),
  );
};
