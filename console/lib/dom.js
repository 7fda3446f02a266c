/**
 * A few helpers to build the DOM by hand: the console has no framework, each page renders its
 * sections with `h()` and replaces them when new data comes.
 */

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {Child | ChildList} Children
 * @typedef {Array<Children>} ChildList
 * @typedef {Record<string, unknown>} Attributes
 */

/**
 * An element with attributes and children. `class`, `for`, `text`, `on<event>` handlers, `style`
 * (an object: set through the CSSOM, which the page's CSP allows), `data-*`, `aria-*` and any
 * property of the element (`value`, `checked`, `disabled`, ...).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes | null} [attributes]
 * @param {...Children} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const h = (tag, attributes, ...children) => {
  const element = document.createElement(tag);
  applyAttributes(element, attributes ?? {});
  append(element, children);
  return element;
};

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An SVG element (charts).
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...Children} children
 * @returns {SVGElement}
 */
export const svg = (tag, attributes = {}, ...children) => {
  const element = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
};

/**
 * @param {HTMLElement} element
 * @param {Attributes} attributes
 */
const applyAttributes = (element, attributes) => {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = String(value);
    else if (name === 'text') element.textContent = String(value);
    else if (name === 'for') element.setAttribute('for', String(value));
    else if (name === 'style' && typeof value === 'object') Object.assign(element.style, value);
    else if (name.startsWith('on') && typeof value === 'function')
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name.startsWith('data-') || name.startsWith('aria-') || name === 'role' || name === 'scope')
      element.setAttribute(name, value === true ? 'true' : String(value));
    else if (name in element) Reflect.set(element, name, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
};

/**
 * @param {Node} parent
 * @param {Children[]} children
 */
const append = (parent, children) => {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child);
    else if (child === null || child === undefined || child === false) continue;
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
};

/**
 * Replaces an element's children.
 * @param {Element} element
 * @param {...Children} children
 */
export const replace = (element, ...children) => {
  element.replaceChildren();
  append(element, children);
};

/**
 * Bytes as a person reads them (decimal units, as Rucio's tools print).
 * @param {number | null | undefined} bytes
 */
export const formatBytes = (bytes) => {
  if (bytes === null || bytes === undefined) return '–';
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
};

/** @param {number | null | undefined} count */
export const formatCount = (count) => (count === null || count === undefined ? '–' : count.toLocaleString('en'));

/**
 * A time from the API (ISO 8601, or Rucio's `Thu, 26 Nov 2026 09:29:27 UTC`) as a Date.
 * @param {string | null | undefined} text
 * @returns {Date | undefined}
 */
export const parseTime = (text) => {
  if (!text) return undefined;
  const time = new Date(text.endsWith(' UTC') ? `${text.slice(0, -4)} GMT` : text);
  return Number.isNaN(time.getTime()) ? undefined : time;
};

/**
 * A time in UTC as ISO 8601, to the second: `2026-11-26T09:29:27Z`, everywhere the console shows
 * one (auditors compare times across sites and time zones; no 12-hour clock, no month first).
 * @param {string | Date | null | undefined} value
 */
export const formatTime = (value) => {
  const time = typeof value === 'string' || value === null || value === undefined ? parseTime(value) : value;
  if (!time) return '–';
  return `${time.toISOString().slice(0, 19)}Z`;
};

/** What a time field takes: ISO 8601 in UTC, the date alone or to the minute or second. */
const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?)?Z?$/;

/**
 * A time typed in a field, read as ISO 8601 UTC (`2026-11-26`, `2026-11-26T09:29`,
 * `2026-11-26T09:29:27Z`); undefined for an empty field; an Error saying what is expected for
 * anything else (no local times, no month-first dates).
 * @param {string} text
 * @returns {Date | undefined | Error}
 */
export const parseTimeInput = (text) => {
  const value = text.trim();
  if (!value) return undefined;
  const match = ISO_UTC.exec(value);
  if (!match) return new Error(`“${value}” is not a time in ISO 8601 UTC, such as 2026-11-26T09:29:27Z.`);
  const [, year, month, day, hour = '00', minute = '00', second = '00'] = match;
  const time = new Date(
    Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)),
  );
  if (Number.isNaN(time.getTime()) || time.getUTCDate() !== Number(day))
    return new Error(`“${value}” is not a date of the calendar.`);
  return time;
};

/**
 * A text field for a time in ISO 8601 UTC, with the format as its hint (browsers' date pickers
 * show local, 12-hour or month-first forms; this one shows and takes what the console writes).
 * @param {string} id
 * @param {string} [value] an ISO time
 * @param {Attributes} [attributes]
 */
export const timeInput = (id, value = '', attributes = {}) =>
  h('input', {
    id,
    value: value ? formatTime(value) : '',
    placeholder: 'YYYY-MM-DDThh:mm:ssZ',
    inputMode: 'numeric',
    autocomplete: 'off',
    spellcheck: false,
    pattern: ISO_UTC.source,
    title: 'ISO 8601 in UTC: 2026-11-26T09:29:27Z (the date alone, or to the minute, will do)',
    ...attributes,
  });

/**
 * How long ago, roughly: `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago`.
 * @param {string | Date | null | undefined} value
 * @param {Date} [now]
 */
export const formatAgo = (value, now = new Date()) => {
  const time = typeof value === 'string' || value === null || value === undefined ? parseTime(value) : value;
  if (!time) return '–';
  const seconds = Math.round((now.getTime() - time.getTime()) / 1000);
  if (Math.abs(seconds) < 1) return 'now';
  const future = seconds < 0;
  const magnitude = Math.abs(seconds);
  const text =
    magnitude < 60
      ? `${magnitude} s`
      : magnitude < 3600
        ? `${Math.round(magnitude / 60)} min`
        : magnitude < 86400
          ? `${Math.round(magnitude / 3600)} h`
          : `${Math.round(magnitude / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
};

/**
 * A <time> showing the UTC time, with how long ago as its title.
 * @param {string | null | undefined} value
 */
export const timeElement = (value) => {
  const time = parseTime(value);
  if (!time) return h('span', { class: 'muted' }, '–');
  return h('time', { dateTime: time.toISOString(), title: formatAgo(time) }, formatTime(time));
};

/** States that mean done, in progress or in trouble, whatever the kind of object. */
const TONES = /** @type {Record<string, string>} */ ({
  OK: 'good',
  AVAILABLE: 'good',
  DONE: 'good',
  LIVE: 'good',
  ACTIVE: 'good',
  running: 'good',
  REPLICATING: 'busy',
  COPYING: 'busy',
  QUEUED: 'busy',
  SUBMITTED: 'busy',
  SUBMITTING: 'busy',
  PREPARING: 'busy',
  WAITING: 'busy',
  INJECT: 'busy',
  rebuilding: 'busy',
  STUCK: 'bad',
  FAILED: 'bad',
  BAD: 'bad',
  LOST: 'bad',
  UNAVAILABLE: 'bad',
  SUSPENDED: 'bad',
  failed: 'bad',
  ERASED: 'bad',
  DELETED: 'bad',
  SUSPICIOUS: 'bad',
  NO_SOURCES: 'bad',
  ONLY_TAPE_SOURCES: 'bad',
  MISMATCH_SCHEME: 'bad',
  SUBMISSION_FAILED: 'bad',
  WAITING_APPROVAL: 'busy',
  APPROVED: 'good',
  REJECTED: 'bad',
  INACTIVE: 'plain',
  NEW: 'busy',
  UPDATED: 'busy',
});

/**
 * A state as a badge: coloured by what it means, the state's name always written out (colour is
 * never the only sign).
 * @param {string | null | undefined} state
 */
export const badge = (state) =>
  h('span', { class: `badge ${TONES[state ?? ''] ?? 'plain'}` }, state === null || state === undefined ? '–' : state);

/**
 * A link inside the console.
 * @param {string} hash the route, `#/did/...`
 * @param {Children} children
 * @param {Attributes} [attributes]
 */
export const link = (hash, children, attributes = {}) => h('a', { href: hash, ...attributes }, children);

/** @param {string} scope @param {string} name */
export const didHash = (scope, name) => `#/did/${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;

/** @param {string} scope @param {string} name */
export const didLink = (scope, name) => link(didHash(scope, name), `${scope}:${name}`, { class: 'mono' });

/** @param {string} rse */
export const rseLink = (rse) => link(`#/rse/${encodeURIComponent(rse)}`, rse);

/** @param {string} account */
export const accountLink = (account) => link(`#/account/${encodeURIComponent(account)}`, account);

/** @param {string} id */
export const ruleLink = (id) => link(`#/rule/${encodeURIComponent(id)}`, id, { class: 'mono' });

/**
 * A table with a header row; `rows` are arrays of cells.
 * @param {string[]} headers
 * @param {Children[][]} rows
 * @param {{ caption?: string, empty?: string, numeric?: number[] }} [options]
 */
export const table = (headers, rows, options = {}) => {
  const numeric = new Set(options.numeric ?? []);
  if (rows.length === 0) return h('p', { class: 'muted empty' }, options.empty ?? 'Nothing to show.');
  return scrolling(
    h(
      'table',
      null,
      options.caption ? h('caption', { class: 'visually-hidden' }, options.caption) : null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headers.map((header, index) => h('th', { scope: 'col', class: numeric.has(index) ? 'num' : '' }, header)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            null,
            row.map((cell, index) => h('td', { class: numeric.has(index) ? 'num' : '' }, cell)),
          ),
        ),
      ),
    ),
  );
};

/**
 * A wide element in a box that scrolls sideways, with a visible hint while columns are hidden
 * (and the box reachable by keyboard, so that the arrows scroll it). The hint follows the size.
 * @param {HTMLElement} content
 */
export const scrolling = (content) => {
  const hint = h('p', { class: 'scroll-hint', hidden: true }, 'More columns to the right: scroll sideways →');
  const box = h('div', { class: 'table-wrap' }, content);
  const wrap = h('div', { class: 'scroll-area' }, hint, box);
  const update = () => {
    const hidden = box.scrollWidth > box.clientWidth + 1;
    hint.hidden = !hidden;
    wrap.classList.toggle('overflows', hidden);
    const atEnd = box.scrollLeft + box.clientWidth >= box.scrollWidth - 1;
    wrap.classList.toggle('at-end', atEnd);
    if (hidden) {
      box.tabIndex = 0;
      box.setAttribute('role', 'region');
      box.setAttribute('aria-label', 'Table, scrolls sideways');
    } else {
      box.removeAttribute('tabindex');
      box.removeAttribute('role');
      box.removeAttribute('aria-label');
    }
  };
  new ResizeObserver(update).observe(box);
  box.addEventListener('scroll', update, { passive: true });
  return wrap;
};

/**
 * A list of terms and values (a record's fields).
 * @param {[string, Children][]} pairs
 */
export const fields = (pairs) =>
  h(
    'dl',
    { class: 'fields' },
    pairs.map(([term, value]) => [
      h('dt', null, term),
      h('dd', null, value === null || value === undefined || value === '' ? '–' : value),
    ]),
  );

/**
 * A page's heading: its title, a line saying what the page is for, and the page's actions. A
 * record's page names the kind of record above its title (`eyebrow`) and may describe the record
 * under it (`summary`) instead of the muted lead.
 * @param {Children} title
 * @param {Children} lead
 * @param {{ eyebrow?: Children, summary?: Children, actions?: Children, titleAttributes?: Attributes }} [options]
 */
export const pageHead = (title, lead, options = {}) =>
  h(
    'div',
    { class: 'page-head' },
    h(
      'div',
      null,
      options.eyebrow ? h('p', { class: 'eyebrow' }, options.eyebrow) : null,
      h('h1', options.titleAttributes ?? null, title),
      lead ? h('p', { class: 'muted' }, lead) : null,
      options.summary ? h('p', { class: 'lead' }, options.summary) : null,
    ),
    options.actions ? h('div', { class: 'actions' }, options.actions) : null,
  );

/**
 * A titled section of a page.
 * @param {string} title
 * @param {Children} children
 * @param {{ id?: string, actions?: Children }} [options]
 */
export const section = (title, children, options = {}) => {
  const headingId = `${options.id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-heading`;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': headingId, ...(options.id ? { id: options.id } : {}) },
    h(
      'header',
      { class: 'card-head' },
      h('h2', { id: headingId }, title),
      options.actions ? h('div', { class: 'actions' }, options.actions) : null,
    ),
    h('div', { class: 'card-body' }, children),
  );
};

/**
 * An error said plainly, with Rucio's exception class when the API gave one.
 * @param {unknown} error
 */
export const errorBox = (error) => {
  const message = error instanceof Error ? error.message : String(error);
  const exceptionClass =
    error && typeof error === 'object' && 'exceptionClass' in error ? String(error.exceptionClass) : undefined;
  return h(
    'div',
    { class: 'alert bad break', role: 'alert' },
    exceptionClass ? h('strong', null, `${exceptionClass}: `) : null,
    message,
  );
};

/**
 * A short result said where an action happened: good news as a status, failures as an alert.
 * @param {'good' | 'bad' | 'info' | 'warn'} tone
 * @param {...Children} children
 */
export const notice = (tone, ...children) =>
  h('div', { class: `alert ${tone} break`, role: tone === 'bad' ? 'alert' : 'status' }, children);

/**
 * Asks before something that cannot be undone, in a modal dialog (Escape or Cancel says no; the
 * focus starts on Cancel, so Enter alone does not confirm). Resolves to the form's values when
 * confirmed, or null.
 * @param {{ title: string, body?: Children, confirm: string, danger?: boolean, fields?: Children }} options
 * @returns {Promise<FormData | null>}
 */
export const confirmDialog = (options) =>
  new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'button', value: 'cancel' }, 'Cancel');
    const confirm = h(
      'button',
      { type: 'submit', class: `button ${options.danger ? 'danger' : 'primary'}`, value: 'confirm' },
      options.confirm,
    );
    const form = h(
      'form',
      { method: 'dialog', class: 'dialog-form' },
      h('h2', { id: 'dialog-title' }, options.title),
      options.body ? h('div', { class: 'dialog-body' }, options.body) : null,
      options.fields ?? null,
      h('div', { class: 'form-actions' }, cancel, confirm),
    );
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'dialog-title' }, form);
    /** @type {FormData | null} */
    let answer = null;
    form.addEventListener('submit', (event) => {
      if (!form.reportValidity()) {
        event.preventDefault();
        return;
      }
      answer = new FormData(form);
    });
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    cancel.focus();
  });

/**
 * A page for what is not there, with the ways on: back, and where to look instead.
 * @param {HTMLElement} main
 * @param {{ title?: string, what?: Children, error?: unknown }} [options]
 */
export const notFoundPage = (main, options = {}) =>
  replace(
    main,
    h(
      'div',
      { class: 'not-found' },
      h('p', { class: 'eyebrow' }, '404 · not found'),
      h('h1', null, options.title ?? 'Nothing here'),
      h('p', { class: 'break' }, options.what ?? 'The console has no page at this address.'),
      options.error ? errorBox(options.error) : null,
      h(
        'p',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button', onclick: () => history.back() }, '← Back'),
        h('a', { href: '#/', class: 'button primary' }, 'Find data'),
        h('a', { href: '#/rules', class: 'button' }, 'Rules'),
      ),
    ),
  );

/**
 * A progress bar with its text: `role=progressbar` and the values for screen readers.
 * @param {number} fraction between 0 and 1
 * @param {string} label
 */
export const progressBar = (fraction, label) => {
  const percent = Math.max(0, Math.min(100, Math.round(fraction * 1000) / 10));
  return h(
    'div',
    {
      class: 'progress',
      role: 'progressbar',
      'aria-valuemin': '0',
      'aria-valuemax': '100',
      'aria-valuenow': String(percent),
      'aria-label': label,
    },
    h('div', { class: 'progress-fill', style: { width: `${percent}%` } }),
    h('span', { class: 'progress-text' }, `${percent}%`),
  );
};

/**
 * Waits `ms` after the last call before calling `action`.
 * @template {unknown[]} A
 * @param {(...args: A) => void} action
 * @param {number} ms
 * @returns {(...args: A) => void}
 */
export const debounce = (action, ms) => {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => action(...args), ms);
  };
};

/**
 * Re-renders a live part of a page without losing the keyboard focus: the focused control is
 * found again after the update by its id or its accessible name.
 * @param {Element} container
 * @param {() => unknown} update
 */
export const keepFocus = async (container, update) => {
  const focused = document.activeElement;
  const label = focused?.getAttribute('aria-label');
  const text =
    focused instanceof HTMLElement && (focused.tagName === 'A' || focused.tagName === 'BUTTON')
      ? focused.textContent
      : null;
  const inside = focused !== null && focused !== container && container.contains(focused);
  await update();
  if (!inside || container.contains(focused)) return;
  const again = focused.id
    ? container.querySelector(`#${CSS.escape(focused.id)}`)
    : label
      ? container.querySelector(`[aria-label="${CSS.escape(label)}"]`)
      : [...container.querySelectorAll(focused.tagName)].find((candidate) => candidate.textContent === text);
  if (again instanceof HTMLElement) again.focus();
};
