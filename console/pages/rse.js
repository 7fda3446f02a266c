import { allLines, getJson, part } from '../lib/api.js';
import {
  accountLink,
  badge,
  fields,
  formatBytes,
  formatCount,
  h,
  link,
  progressBar,
  replace,
  section,
  table,
  timeElement,
} from '../lib/dom.js';

/** An RSE: its settings and attributes, its protocols, its usage per source, its limits and who uses it. */
export const title = 'Storage element';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [rseName = ''] = view.params;
  const path = part(rseName);
  const rse = await getJson(`/rses/${path}`);
  const [attributes, usage, limits, accounts] = await Promise.all([
    getJson(`/rses/${path}/attr/`).catch(() => ({})),
    allLines(`/rses/${path}/usage`).catch(() => []),
    getJson(`/rses/${path}/limits`).catch(() => ({})),
    allLines(`/rses/${path}/accounts/usage`, 1000).catch(() => []),
  ]);
  const available = (/** @type {boolean} */ flag) => (flag ? badge('YES') : badge('NO'));
  replace(
    view.main,
    h(
      'div',
      { class: 'page-head' },
      h('div', null, h('p', { class: 'eyebrow' }, 'storage element'), h('h1', null, rse.rse)),
      view.who.admin
        ? h(
            'div',
            { class: 'actions' },
            link(`#/history/rse/${encodeURIComponent(rse.rse)}`, 'History', { class: 'button' }),
          )
        : null,
    ),
    h(
      'div',
      { class: 'grid two' },
      section(
        'Settings',
        fields([
          ['Type', badge(rse.rse_type)],
          [
            'Read / write / delete',
            h(
              'span',
              { class: 'badges' },
              available(rse.availability_read),
              ' ',
              available(rse.availability_write),
              ' ',
              available(rse.availability_delete),
            ),
          ],
          ['Deterministic', rse.deterministic ? 'yes' : 'no'],
          ['Volatile', rse.volatile ? 'yes' : 'no'],
          ['Path algorithm', rse.lfn2pfn_algorithm],
          ['Verify checksums', rse.verify_checksum ? 'yes' : 'no'],
          ['Location', [rse.city, rse.country_name].filter(Boolean).join(', ') || null],
          ['Id', h('code', null, rse.id)],
        ]),
      ),
      section(
        'Attributes',
        Object.keys(attributes).length === 0
          ? h('p', { class: 'muted empty' }, 'No attributes.')
          : fields(
              Object.entries(attributes)
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([key, value]) => [key, h('code', null, JSON.stringify(value))]),
            ),
      ),
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
              formatBytes(row.total),
              formatBytes(row.free),
              row.total ? progressBar(row.used / row.total, `${row.source}: used of total`) : '',
              timeElement(row.updated_at),
            ]),
            { numeric: [1, 2, 3, 4], caption: 'Usage per source' },
          ),
    ),
    section(
      'Limits',
      Object.keys(limits).length === 0
        ? h('p', { class: 'muted empty' }, 'No limits set (MinFreeSpace, MaxBeingDeletedFiles, …).')
        : fields(
            Object.entries(limits).map(([key, value]) => [
              key,
              typeof value === 'number' && key.toLowerCase().includes('space') ? formatBytes(value) : String(value),
            ]),
          ),
    ),
    section(
      'Protocols',
      table(
        ['Scheme', 'Host', 'Port', 'Prefix', 'Implementation', 'WAN read / write / TPC'],
        (rse.protocols ?? []).map((/** @type {any} */ protocol) => [
          h('code', null, protocol.scheme),
          protocol.hostname,
          String(protocol.port),
          h('code', { class: 'break' }, protocol.prefix),
          h('code', { class: 'small' }, protocol.impl),
          priorities(protocol.domains?.wan),
        ]),
        { empty: 'No protocol: nothing can be read or written here.', caption: 'Protocols' },
      ),
    ),
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
};

/** @param {Record<string, number | null> | undefined} wan */
const priorities = (wan) => {
  if (!wan) return '–';
  const show = (/** @type {number | null | undefined} */ value) => (value ? String(value) : '–');
  return `${show(wan.read)} / ${show(wan.write)} / ${show(wan.third_party_copy_write ?? wan.third_party_copy)}`;
};
