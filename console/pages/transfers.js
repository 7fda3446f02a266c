import { allLines, getJson } from '../lib/api.js';
import {
  badge,
  didLink,
  errorBox,
  formatBytes,
  formatCount,
  h,
  pageHead,
  replace,
  rseLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { stackedBars } from '../lib/charts.js';
import { tile } from './projections.js';

/**
 * Transfers for operators: the active requests per state and per link, the last hour's throughput
 * and failures as a chart (5-minute buckets), the oldest request waiting in each state, and the
 * per-link statistics of `/requests/metrics`.
 */
export const title = 'Transfers';

/** The states of a request that found no source to copy from. */
const SOURCELESS = new Set(['NO_SOURCES', 'ONLY_TAPE_SOURCES', 'MISMATCH_SCHEME']);

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const summary = h('div', { class: 'tiles' });
  const chartBox = h('div');
  const linksBox = h('div');
  const waitingBox = h('div');
  const metricsBox = h('div');
  replace(
    view.main,
    pageHead(
      'Transfers',
      'Transfer requests the conveyor works on, the links they use, and what finished or failed in the last hour.',
    ),
    summary,
    chartBox,
    h('div', { class: 'grid two' }, linksBox, waitingBox),
    metricsBox,
  );
  const refresh = async () => {
    let status;
    try {
      status = await getJson('/admin/transfers');
    } catch (error) {
      replace(summary, errorBox(error));
      return;
    }
    const active = Object.values(status.states).reduce(
      (/** @type {number} */ sum, /** @type {any} */ count) => sum + count,
      0,
    );
    const done = status.throughput.reduce(
      (/** @type {number} */ sum, /** @type {any} */ bucket) => sum + bucket.files_done,
      0,
    );
    const bytes = status.throughput.reduce(
      (/** @type {number} */ sum, /** @type {any} */ bucket) => sum + bucket.bytes_done,
      0,
    );
    const failed = status.throughput.reduce(
      (/** @type {number} */ sum, /** @type {any} */ bucket) => sum + bucket.files_failed,
      0,
    );
    // Requests without a source (NO_SOURCES, …) are failures waiting for a repair, not work under
    // way: they count apart, in the colour of trouble, beside the transfers that failed.
    const sourceless = Object.entries(status.states)
      .filter(([state]) => SOURCELESS.has(state))
      .reduce((/** @type {number} */ sum, [, count]) => sum + Number(count), 0);
    replace(
      summary,
      tile('Active requests', formatCount(active), active > 0 ? 'busy' : ''),
      ...Object.entries(status.states).map(([state, count]) =>
        tile(state, formatCount(Number(count)), SOURCELESS.has(state) ? 'bad' : 'busy'),
      ),
      tile('Done, last hour', formatCount(done), 'good'),
      tile('Bytes, last hour', formatBytes(bytes)),
      tile('Transfers failed, last hour', formatCount(failed), failed > 0 ? 'bad' : 'good'),
      tile('Waiting without a source', formatCount(sourceless), sourceless > 0 ? 'bad' : 'good'),
    );
    replace(
      chartBox,
      section(
        'Throughput, last hour',
        stackedBars(
          status.throughput.map((/** @type {any} */ bucket) => ({
            label: bucket.at.slice(11, 16),
            values: [bucket.files_done, bucket.files_failed],
          })),
          [
            { name: 'files done', className: 'series-good' },
            { name: 'files failed', className: 'series-bad' },
          ],
          `Files transferred per 5 minutes over the last hour: ${done} done, ${failed} failed`,
        ),
      ),
    );
    replace(
      linksBox,
      section(
        'Active requests per link',
        table(
          ['Source', 'Destination', 'States'],
          status.links.map((/** @type {any} */ link) => [
            link.source === '?' ? h('span', { class: 'muted' }, 'not chosen yet') : rseLink(link.source),
            rseLink(link.destination),
            h(
              'span',
              { class: 'badges' },
              Object.entries(link.states).map(([state, count]) => [badge(state), ` ${count} `]),
            ),
          ]),
          { empty: 'No transfer under way.', caption: 'Active requests per link' },
        ),
      ),
    );
    replace(
      waitingBox,
      section('Oldest waiting', [
        table(
          ['State', 'File', 'To', 'Since'],
          status.oldest_waiting.map((/** @type {any} */ request) => [
            badge(request.state),
            didLink(request.scope, request.name),
            rseLink(request.destination),
            timeElement(request.requested_at),
          ]),
          { empty: 'Nothing waits for the conveyor.', caption: 'Oldest request waiting in each state' },
        ),
        Object.keys(status.failures_last_hour.archived).length > 0
          ? h(
              'p',
              { class: 'small' },
              'Ended in failure, last hour: ',
              Object.entries(status.failures_last_hour.archived).map(([state, count]) => [badge(state), ` ${count} `]),
            )
          : null,
      ]),
    );
    const metrics = await allLines('/requests/metrics', 1000).catch(() => []);
    replace(
      metricsBox,
      section(
        'Links, done and failed',
        table(
          [
            'Source',
            'Destination',
            'Distance',
            'Files done, 1 h',
            'Bytes done, 1 h',
            'Files failed, 1 h',
            'Files done, 6 h',
          ],
          metrics.map((row) => [
            rseLink(row.src_rse),
            rseLink(row.dst_rse),
            row.distance === null || row.distance === undefined ? '–' : String(row.distance),
            formatCount(row.files?.['done-total-1h'] ?? 0),
            formatBytes(row.bytes?.['done-total-1h'] ?? 0),
            formatCount(row.files?.['failed-total-1h'] ?? 0),
            formatCount(row.files?.['done-total-6h'] ?? 0),
          ]),
          {
            empty: 'No transfer in the last six hours.',
            numeric: [2, 3, 4, 5, 6],
            caption: 'Transfer metrics per link',
          },
        ),
      ),
    );
  };
  await refresh();
  view.every(3000, refresh);
};
