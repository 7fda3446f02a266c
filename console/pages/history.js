import { didPath, getJson, pager, part, query } from '../lib/api.js';
import {
  badge,
  debounce,
  errorBox,
  formatCount,
  formatTime,
  h,
  link,
  pageHead,
  parseTimeInput,
  replace,
  section,
  timeInput,
} from '../lib/dom.js';
import { typeInWords } from '../lib/events.js';
import { comparisonTable } from '../lib/diff.js';
import { timelineEntry, timelineList } from '../lib/timeline.js';

/**
 * The history of a DID, rule, RSE, account or subscription as a timeline (the audit API, oldest
 * first, a page at a time, new events appended as they come), and for a DID or a rule its state
 * as of any moment beside its state now, the differences marked. The moment is chosen on a slider
 * over the history's events or typed as a date and time (UTC).
 */
export const title = 'History';

const PAGE = 200;

/** @typedef {{ label: string, events: string, state?: string, page: string }} Subject */

/**
 * @param {string} kind
 * @param {string} id
 * @returns {Subject}
 */
const subjectOf = (kind, id) => {
  if (kind === 'did') {
    const slash = id.indexOf('/');
    // Scopes hold no slash: the first one ends the scope, the rest is the name.
    const scope = id.slice(0, slash);
    const name = id.slice(slash + 1);
    const path = didPath(scope, name);
    return {
      label: `${scope}:${name}`,
      events: `/audit/dids/${path}/events`,
      state: `/audit/dids/${path}/state`,
      page: `#/did/${encodeURIComponent(scope)}/${encodeURIComponent(name)}`,
    };
  }
  const plural = { rule: 'rules', rse: 'rses', account: 'accounts', subscription: 'subscriptions' }[kind] ?? kind;
  return {
    label: id,
    events: `/audit/${plural}/${part(id)}/events`,
    ...(kind === 'rule' ? { state: `/audit/rules/${part(id)}/state` } : {}),
    page: kind === 'subscription' ? '#/audit' : `#/${kind}/${encodeURIComponent(id)}`,
  };
};

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [kind = 'did', id = ''] = view.params;
  const subject = subjectOf(kind, id);
  const typeFilter = view.query.get('type') ?? '';

  /** @type {any[]} */
  const events = [];
  const list = timelineList(`History of ${subject.label}`);
  const more = h('button', { type: 'button', class: 'button small' }, `Show ${PAGE} more`);
  const count = h('span', { class: 'muted' });
  const asOfBox = h('div', { id: 'as-of' });
  const typeSelect = h(
    'select',
    { id: 'history-type', 'aria-label': 'Only events of type' },
    h('option', { value: '' }, 'every type'),
  );

  replace(
    view.main,
    pageHead(subject.label, null, {
      eyebrow: `history of ${kind === 'did' ? 'a data identifier' : `a ${kind}`}`,
      titleAttributes: { class: 'mono break' },
      actions: link(subject.page, kind === 'subscription' ? 'Audit feed' : `The ${kind === 'did' ? 'DID' : kind} now`, {
        class: 'button',
      }),
    }),
    subject.state ? asOfBox : null,
    section(
      'Events',
      [
        h(
          'div',
          { class: 'toolbar' },
          h('label', { for: 'history-type' }, 'Show '),
          typeSelect,
          h('span', { class: 'spacer' }),
          count,
        ),
        list,
        h('div', { class: 'pager' }, more),
      ],
      {
        id: 'events',
      },
    ),
  );

  const reader = pager(`${subject.events}${query({ type: typeFilter })}`, { signal: view.signal });
  view.signal.addEventListener('abort', () => void reader.close());
  const load = async () => {
    more.disabled = true;
    const page = await reader.next(PAGE);
    for (const event of page) {
      events.push(event);
      list.appendChild(timelineEntry(event));
    }
    more.hidden = reader.finished;
    more.disabled = false;
    replace(
      count,
      `${formatCount(events.length)} event${events.length === 1 ? '' : 's'}${reader.finished ? '' : ' so far'}`,
    );
    refreshTypes();
    if (subject.state) updateSlider();
  };
  more.addEventListener('click', () => void load());

  const refreshTypes = () => {
    const types = [...new Set(events.map((event) => event.type).filter(Boolean))].sort();
    if (typeFilter && !types.includes(typeFilter)) types.push(typeFilter);
    replace(
      typeSelect,
      h('option', { value: '' }, 'every type'),
      types.map((type) => h('option', { value: type, selected: type === typeFilter }, typeInWords(type))),
    );
  };
  typeSelect.addEventListener('change', () => {
    const hash = location.hash.split('?')[0] ?? '';
    view.navigate(`${hash}${query({ type: typeSelect.value })}`);
  });

  // The as-of panel: a slider over the events loaded, a date and time field, the two states.
  const slider = h('input', {
    id: 'as-of-slider',
    type: 'range',
    min: '0',
    max: '0',
    value: '0',
    step: '1',
    'aria-describedby': 'as-of-slider-text',
  });
  const sliderText = h('span', { id: 'as-of-slider-text', class: 'muted' });
  const timeField = timeInput('as-of-time', '', { 'aria-describedby': 'as-of-time-help' });
  const onlyChanges = h('input', { id: 'as-of-only-changes', type: 'checkbox', checked: true });
  const comparison = h('div', { id: 'as-of-comparison', 'aria-live': 'polite' });
  /** @type {string | undefined} */
  let asOf;

  const updateSlider = () => {
    slider.max = String(Math.max(0, events.length - 1));
    if (asOf === undefined && events.length > 0) slider.value = String(Math.max(0, Math.floor(events.length / 2) - 1));
    describeSlider();
  };
  const describeSlider = () => {
    const event = events[Number(slider.value)];
    replace(
      sliderText,
      event
        ? `as of event #${event.position} (${formatTime(event.at)}): ${typeInWords(event.type ?? 'event')}`
        : 'no events yet',
    );
  };
  /** The slider on the last event at or before a time, so that both say the same moment. @param {Date} time */
  const sliderAt = (time) => {
    let index = -1;
    events.forEach((event, at) => {
      if (event.at && Date.parse(event.at) <= time.getTime()) index = at;
    });
    if (index >= 0) slider.value = String(index);
    describeSlider();
    if (index < 0) replace(sliderText, `before the first event (${formatTime(events[0]?.at)})`);
  };
  const compare = async () => {
    if (!subject.state || asOf === undefined) return;
    replace(comparison, h('p', { class: 'muted' }, 'Folding the events…'));
    try {
      const [then, now] = await Promise.all([
        getJson(`${subject.state}${query({ as_of: asOf })}`),
        getJson(subject.state),
      ]);
      replace(
        comparison,
        h(
          'p',
          { class: 'small muted state-legend' },
          'LIVE: it existed at that moment; ABSENT: not created yet; DELETED: already deleted.',
        ),
        h(
          'div',
          { class: 'state-heads' },
          h(
            'div',
            null,
            h('strong', null, 'Then '),
            badge(then.status),
            h(
              'span',
              { class: 'muted' },
              ` as of ${/^\d+$/.test(asOf) ? `position ${asOf}` : formatTime(asOf)}`,
              then.position !== null ? `, last event #${then.position}` : ', before its first event',
            ),
          ),
          h(
            'div',
            null,
            h('strong', null, 'Now '),
            badge(now.status),
            h('span', { class: 'muted' }, now.position !== null ? `, last event #${now.position}` : ''),
          ),
        ),
        comparisonTable(then, now, { thenLabel: 'Then', nowLabel: 'Now', onlyChanges: onlyChanges.checked }),
      );
    } catch (error) {
      replace(comparison, errorBox(error));
    }
  };
  const fromSlider = debounce(() => {
    const event = events[Number(slider.value)];
    if (!event) return;
    asOf = String(event.position);
    timeField.value = event.at ? formatTime(event.at) : '';
    timeField.setCustomValidity('');
    void compare();
  }, 250);
  slider.addEventListener('input', () => {
    describeSlider();
    fromSlider();
  });
  /** @param {SubmitEvent} event */
  const fromTime = (event) => {
    event.preventDefault();
    const time = parseTimeInput(timeField.value);
    timeField.setCustomValidity(time instanceof Error ? time.message : '');
    if (!(time instanceof Date)) {
      timeField.reportValidity();
      return;
    }
    asOf = formatTime(time);
    timeField.value = asOf;
    sliderAt(time);
    void compare();
  };
  onlyChanges.addEventListener('change', () => void compare());

  if (subject.state) {
    replace(
      asOfBox,
      section(
        'State as of a moment',
        [
          h(
            'p',
            { class: 'muted' },
            'Folded from the events by the service’s own deciders, never from a read model: what the ',
            kind === 'did' ? 'DID' : 'rule',
            ' was at that moment, beside what it is now.',
          ),
          h(
            'div',
            { class: 'as-of-controls' },
            h(
              'div',
              { class: 'field grow' },
              h('label', { for: 'as-of-slider' }, 'Move through the events'),
              slider,
              sliderText,
            ),
            h(
              'form',
              { class: 'field as-of-time', onsubmit: fromTime },
              h('label', { for: 'as-of-time' }, 'Or a time (ISO 8601, UTC)'),
              h('div', { class: 'inline' }, timeField, h('button', { type: 'submit', class: 'button' }, 'Show')),
              h(
                'small',
                { id: 'as-of-time-help', class: 'hint' },
                'For example 2026-11-26T09:29:27Z, or the date alone.',
              ),
            ),
            h(
              'div',
              { class: 'field checkbox' },
              h('label', { for: 'as-of-only-changes' }, onlyChanges, ' Only the differences'),
            ),
          ),
          comparison,
        ],
        { id: 'as-of-section' },
      ),
    );
    replace(comparison, h('p', { class: 'muted' }, 'Choose a moment to see the state then.'));
  }

  try {
    await load();
  } catch (error) {
    replace(list, h('li', null, errorBox(error)));
    more.hidden = true;
    return;
  }
  // New events are appended as they are recorded.
  view.every(3000, async () => {
    if (!reader.finished || typeFilter) return;
    const last = events[events.length - 1]?.position ?? 0;
    const fresh = pager(`${subject.events}${query({ since: last + 1 })}`, { signal: view.signal });
    for (const event of await fresh.next(PAGE)) {
      events.push(event);
      list.appendChild(timelineEntry(event));
    }
    await fresh.close();
    replace(count, `${formatCount(events.length)} event${events.length === 1 ? '' : 's'}`);
    refreshTypes();
    if (subject.state) updateSlider();
  });
};
