import { allLines, call, getJson, query } from '../lib/api.js';
import {
  errorBox,
  formatCount,
  formatTime,
  h,
  pageHead,
  parseTimeInput,
  progressBar,
  replace,
  section,
  timeInput,
} from '../lib/dom.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { timelineEntry, timelineList } from '../lib/timeline.js';

/**
 * The auditors' page: the global event feed filtered by account, acting identity, request trace
 * (everything one request caused), type and time, newest first, a
 * page at a time (new events come on top when followed), links to the histories of any subject,
 * and `audit verify` run from the browser with its progress and verdict. Times are shown and
 * entered as ISO 8601 UTC.
 */
export const title = 'Audit';

const PAGE = 100;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const filters = {
    account: view.query.get('account') ?? '',
    identity_type: view.query.get('identity_type') ?? '',
    identity: view.query.get('identity') ?? '',
    trace: view.query.get('trace') ?? '',
    type: view.query.get('type') ?? '',
    since: view.query.get('since') ?? '',
    until: view.query.get('until') ?? '',
  };
  // The kinds the feed filters by, as the API lists them (its OpenAPI document).
  const identityKinds = await enumOf(ENUMS.actingIdentityType);
  const account = h('input', { id: 'feed-account', value: filters.account, autocomplete: 'off', placeholder: 'any' });
  const identityType = h(
    'select',
    { id: 'feed-identity-type' },
    ['', ...identityKinds].map((kind) =>
      h('option', { value: kind, selected: kind === filters.identity_type }, kind === '' ? 'any' : kind),
    ),
  );
  const identity = h('input', {
    id: 'feed-identity',
    value: filters.identity,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'user name, DN, SSH fingerprint, daemon',
  });
  const trace = h('input', {
    id: 'feed-trace',
    value: filters.trace,
    autocomplete: 'off',
    spellcheck: false,
    pattern: '[0-9a-f]{32}',
    title: 'A trace id: 32 hex digits (the X-Trace-Id of a request)',
    placeholder: 'any',
  });
  const type = h('input', {
    id: 'feed-type',
    value: filters.type,
    autocomplete: 'off',
    placeholder: 'RuleAdded, DidCreated',
    spellcheck: false,
  });
  const since = timeInput('feed-since', filters.since, { 'aria-describedby': 'feed-time-help' });
  const until = timeInput('feed-until', filters.until, { 'aria-describedby': 'feed-time-help' });
  const follow = h('input', { id: 'feed-follow', type: 'checkbox' });
  const list = timelineList('Events');
  const more = h('button', { type: 'button', class: 'button small' }, 'Older events');
  const count = h('span', { class: 'muted' });

  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    const bounds = [since, until].map((field) => parseTimeInput(field.value));
    for (const [index, bound] of bounds.entries()) {
      const field = index === 0 ? since : until;
      field.setCustomValidity(bound instanceof Error ? bound.message : '');
      if (bound instanceof Error) {
        field.reportValidity();
        return;
      }
    }
    const [from, to] = bounds;
    // One without the other cannot filter: the identity's kind is asked for with its value.
    identityType.setCustomValidity(
      identity.value.trim() && !identityType.value ? 'Choose the kind of identity to filter by.' : '',
    );
    if (!identityType.reportValidity()) return;
    view.navigate(
      `#/audit${query({
        account: account.value.trim(),
        identity_type: identity.value.trim() ? identityType.value : '',
        identity: identity.value.trim(),
        trace: trace.value.trim(),
        type: type.value.replace(/\s+/g, ''),
        since: from instanceof Date ? formatTime(from) : '',
        until: to instanceof Date ? formatTime(to) : '',
      })}`,
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
    pageHead(
      'Audit',
      'Every change is an event: who made it, when, from which request. Filter the feed, open any subject’s history, check that nothing was altered.',
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
      h('div', { class: 'field' }, h('label', { for: 'feed-identity-type' }, 'Identity kind'), identityType),
      h('div', { class: 'field' }, h('label', { for: 'feed-identity' }, 'Identity'), identity),
      h('div', { class: 'field' }, h('label', { for: 'feed-trace' }, 'Request trace'), trace),
      h('div', { class: 'field grow' }, h('label', { for: 'feed-type' }, 'Event types'), type),
      h('div', { class: 'field' }, h('label', { for: 'feed-since' }, 'Since (UTC)'), since),
      h('div', { class: 'field' }, h('label', { for: 'feed-until' }, 'Until (UTC)'), until),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Filter')),
      h(
        'small',
        { id: 'feed-time-help', class: 'hint form-hint' },
        'Times in ISO 8601, UTC: 2026-11-26T09:29:27Z, or the date alone.',
      ),
    ),
    section(
      'Feed, newest first',
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

  // Newest first: the feed API reads forward, so the page reads windows of positions back from
  // the head (a window twice as wide each time it finds too few), and shows them reversed. A time
  // range is read whole (at most 10 000 events) and shown the same way.
  const RANGE_MAX = 10_000;
  const timeRange = Boolean(filters.since || filters.until);
  const base = {
    account: filters.account,
    identity_type: filters.identity_type,
    identity: filters.identity,
    trace: filters.trace,
    type: filters.type,
  };
  let upper = 0;
  let newest = 0;
  let shown = 0;
  /** @type {any[]} */
  let rangeLeft = [];
  /** @param {any[]} events newest first */
  const show = (events) => {
    for (const event of events) list.appendChild(timelineEntry(event));
    shown += events.length;
  };
  const load = async () => {
    more.disabled = true;
    try {
      if (timeRange) {
        if (shown === 0) {
          rangeLeft = (await allLines(`/audit/events${query({ ...filters, limit: RANGE_MAX })}`, RANGE_MAX)).reverse();
          newest = rangeLeft[0]?.position ?? 0;
        }
        show(rangeLeft.splice(0, PAGE));
        more.hidden = rangeLeft.length === 0;
      } else {
        if (shown === 0) {
          const projections = await getJson('/admin/projections');
          upper = Math.max(0, ...projections.map((/** @type {any} */ projection) => Number(projection.head)));
          newest = upper;
        }
        /** @type {any[]} */
        let found = [];
        let window = 500;
        while (found.length < PAGE && upper >= 1) {
          const from = Math.max(1, upper - window + 1);
          const events = await allLines(
            `/audit/events${query({ ...base, since: from, until: upper, limit: RANGE_MAX })}`,
            RANGE_MAX,
          );
          found = [...events, ...found];
          upper = from - 1;
          window = Math.min(window * 2, 1_000_000);
        }
        show(found.reverse());
        more.hidden = upper < 1;
      }
      replace(count, `${formatCount(shown)} event${shown === 1 ? '' : 's'}${more.hidden ? '' : ' so far'}`);
    } catch (error) {
      list.appendChild(h('li', null, errorBox(error)));
      more.hidden = true;
    }
    more.disabled = false;
  };
  more.addEventListener('click', () => void load());
  await load();
  // Followed, the events recorded since come on top.
  view.every(3000, async () => {
    if (!follow.checked || timeRange) return;
    const fresh = await allLines(`/audit/events${query({ ...base, after: newest, limit: 1000 })}`, 1000);
    if (fresh.length === 0) return;
    newest = fresh[fresh.length - 1].position;
    for (const event of fresh) list.insertBefore(timelineEntry(event), list.firstChild);
    shown += fresh.length;
    replace(count, `${formatCount(shown)} event${shown === 1 ? '' : 's'}${more.hidden ? '' : ' so far'}`);
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
