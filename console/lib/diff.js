import { h } from './dom.js';

/**
 * A past state beside the current one, field by field, the fields that differ marked (by colour
 * and by a word, for readers that see no colour). Objects are flattened to paths; lists of
 * records are keyed by what names them (a rule's id, a replica's RSE, a child's name), so that a
 * new replica shows as added rather than as every later entry moved.
 */

/**
 * @param {unknown} value
 * @param {string} prefix
 * @param {Map<string, string>} into
 */
const flatten = (value, prefix, into) => {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(prefix, '[]');
    value.forEach((item, index) => {
      const key =
        item && typeof item === 'object'
          ? (item.id ?? item.rse ?? (item.scope && item.name ? `${item.scope}:${item.name}` : undefined))
          : undefined;
      flatten(item, `${prefix}[${key ?? index}]`, into);
    });
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) into.set(prefix, '{}');
    for (const [key, item] of entries) flatten(item, prefix ? `${prefix}.${key}` : key, into);
  } else {
    into.set(prefix, value === undefined ? '' : JSON.stringify(value));
  }
  return into;
};

/** Fields that say when a state was taken, not what it was. */
const LEFT_OUT = new Set(['as_of', 'position', 'at']);

/**
 * @param {Record<string, unknown>} then
 * @param {Record<string, unknown>} now
 */
export const differences = (then, now) => {
  const before = flatten(then, '', new Map());
  const after = flatten(now, '', new Map());
  const keys = [...new Set([...before.keys(), ...after.keys()])].filter(
    (key) => !LEFT_OUT.has(key.split(/[.[]/)[0] ?? key),
  );
  return keys.map((key) => ({
    key,
    then: before.get(key),
    now: after.get(key),
    changed: before.get(key) !== after.get(key),
  }));
};

/**
 * The comparison as a table.
 * @param {Record<string, unknown>} then
 * @param {Record<string, unknown>} now
 * @param {{ thenLabel: string, nowLabel: string, onlyChanges: boolean }} options
 */
export const comparisonTable = (then, now, options) => {
  const rows = differences(then, now);
  const changed = rows.filter((row) => row.changed).length;
  const shown = options.onlyChanges ? rows.filter((row) => row.changed) : rows;
  const cell = (/** @type {string | undefined} */ value) =>
    value === undefined ? h('span', { class: 'muted' }, 'absent') : h('code', null, value);
  return h(
    'div',
    { class: 'comparison' },
    h(
      'p',
      { class: 'diff-summary' },
      changed === 0
        ? 'No difference: the state then is the state now.'
        : `${changed} field${changed === 1 ? '' : 's'} differ.`,
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'diff' },
        h('caption', { class: 'visually-hidden' }, 'The state then and now, field by field'),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, 'Field'),
            h('th', { scope: 'col' }, options.thenLabel),
            h('th', { scope: 'col' }, options.nowLabel),
          ),
        ),
        h(
          'tbody',
          null,
          shown.map((row) =>
            h(
              'tr',
              { class: row.changed ? 'changed' : '' },
              h(
                'th',
                { scope: 'row' },
                h('code', null, row.key),
                row.changed ? h('span', { class: 'changed-mark' }, ' changed') : null,
              ),
              h('td', null, cell(row.then)),
              h('td', null, cell(row.now)),
            ),
          ),
        ),
      ),
    ),
  );
};
