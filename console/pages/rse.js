import { allLines, getJson, part } from '../lib/api.js';
import {
  accountLink,
  badge,
  fields,
  formatBytes,
  formatCount,
  h,
  link,
  pageHead,
  progressBar,
  replace,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { can } from '../lib/session.js';
import { showAttributes, showAvailability, showDistances, showLimits, showProtocols } from './rseAdmin.js';

/**
 * An RSE: its settings and attributes, its protocols, distances, usage per source, limits and who
 * uses it. For the accounts the API lets change an RSE (admins), each section carries its forms
 * (pages/rseAdmin.js); everyone else reads the same sections without them.
 */
export const title = 'Storage element';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [rseName = ''] = view.params;
  const path = part(rseName);
  const rse = await getJson(`/rses/${path}`);
  const [usage, accounts] = await Promise.all([
    allLines(`/rses/${path}/usage`).catch(() => []),
    allLines(`/rses/${path}/accounts/usage`, 1000).catch(() => []),
  ]);
  const boxes = {
    availability: h('div', { id: 'rse-availability' }),
    attributes: h('div', { id: 'rse-attributes' }),
    protocols: h('div', { id: 'rse-protocols' }),
    distances: h('div', { id: 'rse-distances' }),
    limits: h('div', { id: 'rse-limits' }),
  };
  replace(
    view.main,
    pageHead(rse.rse, null, {
      eyebrow: [h('a', { href: '#/rses' }, 'storage elements'), ' / ', 'storage element'],
      actions: can(view.who, 'readHistory')
        ? link(`#/history/rse/${encodeURIComponent(rse.rse)}`, 'History', { class: 'button' })
        : null,
    }),
    h(
      'div',
      { class: 'grid two' },
      h(
        'div',
        null,
        section(
          'Settings',
          fields([
            ['Type', badge(rse.rse_type)],
            ['Deterministic', rse.deterministic ? 'yes' : 'no'],
            ['Volatile', rse.volatile ? 'yes' : 'no'],
            ['Path algorithm', rse.lfn2pfn_algorithm],
            ['Verify checksums', rse.verify_checksum ? 'yes' : 'no'],
            ['Location', [rse.city, rse.country_name].filter(Boolean).join(', ') || null],
            ['Id', h('code', null, rse.id)],
          ]),
        ),
        boxes.availability,
      ),
      boxes.attributes,
    ),
    section(
      'Usage',
      usage.length === 0
        ? h('p', { class: 'muted empty' }, 'No usage recorded yet.')
        : table(
            ['Source', 'Used', 'Files', 'Total', 'Free', '', 'Updated'],
            usage.map((row) => [
              row.source,
              formatBytes(row.used),
              formatCount(row.files),
              // The catalogue's own counter (`rucio`) knows what is stored, not the capacity.
              hasCapacity(row) ? formatBytes(row.total) : h('span', { class: 'muted' }, 'not known'),
              hasCapacity(row) ? formatBytes(row.free) : '–',
              hasCapacity(row)
                ? progressBar(row.used / row.total, `${row.source}: used of total`)
                : h('span', { class: 'muted small' }, 'no capacity set'),
              timeElement(row.updated_at),
            ]),
            { numeric: [1, 2, 3, 4], caption: 'Usage per source' },
          ),
    ),
    boxes.limits,
    boxes.protocols,
    boxes.distances,
    section(
      'Accounts using it',
      table(
        ['Account', 'Files', 'Bytes', 'Quota', ''],
        accounts.map((row) => [
          accountLink(row.account),
          formatCount(row.used_files),
          formatBytes(row.used_bytes),
          row.quota_bytes === null ? h('span', { class: 'muted' }, 'none') : formatBytes(row.quota_bytes),
          row.quota_bytes ? progressBar(row.used_bytes / row.quota_bytes, `${row.account}: quota used`) : '',
        ]),
        { empty: 'No account stores data here.', numeric: [1, 2, 3], caption: 'Accounts using the RSE' },
      ),
    ),
  );
  const context = { view, rse: rse.rse };
  await Promise.all([
    showAvailability(boxes.availability, context, rse),
    showAttributes(boxes.attributes, context),
    showLimits(boxes.limits, context),
    showProtocols(boxes.protocols, context),
    showDistances(boxes.distances, context),
  ]);
};

/**
 * Whether a usage row knows the RSE's capacity: a source that reports free space (the storage's
 * own, or one set with `PUT /rses/{rse}/usage`), not the catalogue's counter.
 * @param {any} row
 */
const hasCapacity = (row) =>
  row.source !== 'rucio' && typeof row.total === 'number' && row.total > 0 && typeof row.free === 'number';
