import { h } from './dom.js';

/**
 * A past state beside the current one, field by field, the fields that differ marked (by colour
 * and by a word, for readers that see no colour). Records are compared field by field; lists of
 * records are keyed by what names them (a rule's id, a replica's RSE, a child's scope:name), so a
 * rule added since shows as one row "added" rather than as every later entry moved.
 */

/** @typedef {{ key: string, then: string | undefined, now: string | undefined, change: '' | 'changed' | 'added' | 'removed' }} Row */

/** Fields that say when a state was taken, not what it was. */
const LEFT_OUT = new Set(['as_of', 'position', 'at']);

/** @param {unknown} value @returns {value is Record<string, unknown>} */
const isRecord = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A list as entries keyed by what names each item.
 * @param {unknown[]} list
 * @returns {Map<string, unknown>}
 */
const keyed = (list) =>
  new Map(
    list.map((item, index) => {
      if (!isRecord(item)) return [String(index), item];
      const key = item.id ?? item.rse ?? (item.scope && item.name ? `${item.scope}:${item.name}` : undefined);
      return [String(key ?? index), item];
    }),
  );

/**
 * A value in one line: a record by its first few plain fields.
 * @param {unknown} value
 */
const brief = (value) => {
  if (value === undefined) return undefined;
  if (isRecord(value)) {
    const plain = Object.entries(value).filter(
      ([key, item]) => key !== 'id' && item !== null && typeof item !== 'object',
    );
    const text = plain
      .slice(0, 5)
      .map(([key, item]) => `${key}: ${String(item)}`)
      .join(', ');
    return `{ ${text}${plain.length > 5 ? ', …' : ''} }`;
  }
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${value.length} items]`;
  return JSON.stringify(value);
};

/**
 * @param {unknown} then
 * @param {unknown} now
 * @param {string} path
 * @param {Row[]} rows
 */
const compare = (then, now, path, rows) => {
  if (then === undefined || now === undefined) {
    if (then === undefined && now === undefined) return rows;
    rows.push({ key: path, then: brief(then), now: brief(now), change: then === undefined ? 'added' : 'removed' });
    return rows;
  }
  if (isRecord(then) && isRecord(now)) {
    for (const key of new Set([...Object.keys(then), ...Object.keys(now)])) {
      if (!path && LEFT_OUT.has(key)) continue;
      compare(then[key], now[key], path ? `${path}.${key}` : key, rows);
    }
    return rows;
  }
  if (Array.isArray(then) && Array.isArray(now)) {
    const before = keyed(then);
    const after = keyed(now);
    for (const key of new Set([...before.keys(), ...after.keys()]))
      compare(before.get(key), after.get(key), `${path}[${key}]`, rows);
    if (then.length === 0 && now.length === 0) rows.push({ key: path, then: '[]', now: '[]', change: '' });
    return rows;
  }
  const before = JSON.stringify(then);
  const after = JSON.stringify(now);
  rows.push({ key: path, then: before, now: after, change: before === after ? '' : 'changed' });
  return rows;
};

/**
 * @param {Record<string, unknown>} then
 * @param {Record<string, unknown>} now
 * @returns {Row[]}
 */
export const differences = (then, now) => compare(then, now, '', []);

/**
 * The comparison as a table.
 * @param {Record<string, unknown>} then
 * @param {Record<string, unknown>} now
 * @param {{ thenLabel: string, nowLabel: string, onlyChanges: boolean }} options
 */
export const comparisonTable = (then, now, options) => {
  const rows = differences(then, now);
  const changed = rows.filter((row) => row.change).length;
  const shown = options.onlyChanges ? rows.filter((row) => row.change) : rows;
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
        : `${changed} field${changed === 1 ? ' differs' : 's differ'}.`,
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
              { class: row.change ? `changed ${row.change}` : '' },
              h(
                'th',
                { scope: 'row' },
                h('code', null, row.key),
                row.change ? h('span', { class: 'changed-mark' }, ` ${row.change}`) : null,
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
