import { getJson } from '../lib/api.js';
import {
  badge,
  errorBox,
  formatAgo,
  formatCount,
  h,
  keepFocus,
  pageHead,
  replace,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { tile } from './projections.js';

/**
 * The daemons for operators: every role with what triggers it, its queue (waiting, active,
 * delayed, failed, completed jobs), its last cycle (when, how long, what it did, what it skipped
 * and why, or its error) and its next run; and, for root, the heartbeats of every worker process.
 */
export const title = 'Daemons';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const summary = h('div', { class: 'tiles' });
  const rolesBox = h('div', { id: 'daemon-table' });
  const beatsBox = h('div');
  replace(
    view.main,
    pageHead(
      'Daemons',
      'The roles that play Rucio’s daemons (judge, conveyor, reaper, …), each a queue of jobs on Redis.',
    ),
    summary,
    section('Roles', rolesBox),
    beatsBox,
  );
  const refresh = async () => {
    let roles;
    try {
      roles = await getJson('/admin/daemons');
    } catch (error) {
      replace(rolesBox, errorBox(error));
      return;
    }
    const sum = (/** @type {string} */ key) =>
      roles.reduce((/** @type {number} */ total, /** @type {any} */ role) => total + (role.counts[key] ?? 0), 0);
    const failing = roles.filter((/** @type {any} */ role) => role.last_cycle?.error).length;
    replace(
      summary,
      tile('Roles', formatCount(roles.length)),
      tile('Jobs waiting', formatCount(sum('waiting') + sum('prioritized')), sum('waiting') > 0 ? 'busy' : ''),
      tile('Jobs active', formatCount(sum('active'))),
      tile('Jobs failed', formatCount(sum('failed')), sum('failed') > 0 ? 'bad' : 'good'),
      tile('Last cycle failed', formatCount(failing), failing > 0 ? 'bad' : 'good'),
    );
    keepFocus(rolesBox, () =>
      replace(
        rolesBox,
        table(
          [
            'Role',
            'Trigger',
            'Waiting',
            'Active',
            'Delayed',
            'Failed',
            'Done',
            'Last cycle',
            'Did',
            'Skipped',
            'Next run',
          ],
          roles.map((/** @type {any} */ role) => {
            const last = role.last_cycle;
            const notes = [
              last?.error ? h('div', { class: 'bad-text small' }, `failed: ${last.error}`) : null,
              last?.detail ? h('div', { class: 'small muted' }, last.detail) : null,
              last?.skipped_sample?.length
                ? h(
                    'details',
                    { class: 'small' },
                    h('summary', null, `what it skipped (${last.skipped})`),
                    h(
                      'ul',
                      { class: 'plain-list' },
                      last.skipped_sample.map((/** @type {any} */ item) =>
                        h('li', null, h('code', null, item.what), `: ${item.reason}`),
                      ),
                    ),
                  )
                : null,
            ];
            return [
              [h('span', { class: 'mono nowrap' }, role.role), ...notes],
              h('span', { class: 'small' }, role.trigger),
              formatCount((role.counts.waiting ?? 0) + (role.counts.prioritized ?? 0)),
              formatCount(role.counts.active),
              formatCount(role.counts.delayed),
              role.counts.failed ? h('span', { class: 'bad-text' }, formatCount(role.counts.failed)) : '0',
              formatCount(role.counts.completed),
              last
                ? h(
                    'span',
                    { class: 'nowrap', title: last.started_at },
                    formatAgo(last.started_at),
                    h('div', { class: 'small muted' }, `took ${last.duration_ms} ms`),
                  )
                : h('span', { class: 'muted' }, 'never'),
              last?.error ? badge('FAILED') : last ? formatCount(last.done) : '–',
              last && !last.error ? formatCount(last.skipped) : '–',
              role.next_run_at
                ? h('span', { title: role.next_run_at }, formatAgo(role.next_run_at))
                : h('span', { class: 'muted' }, 'on events'),
            ];
          }),
          { numeric: [2, 3, 4, 5, 6, 8, 9], caption: 'Daemon roles' },
        ),
      ),
    );
    if (view.who.root) {
      const beats = await getJson('/heartbeats').catch(() => []);
      /** @type {Map<string, any[]>} */
      const perProcess = new Map();
      for (const beat of beats) {
        const key = `${beat.hostname} pid ${beat.pid}`;
        perProcess.set(key, [...(perProcess.get(key) ?? []), beat]);
      }
      replace(
        beatsBox,
        section(
          'Heartbeats',
          table(
            ['Process', 'Roles beating', 'Last beat', 'Since'],
            [...perProcess].map(([process, list]) => {
              const last = list
                .map((beat) => beat.updated_at)
                .sort()
                .pop();
              return [
                h('span', { class: 'mono' }, process),
                h('span', { class: 'small' }, list.map((beat) => beat.readable).join(', ')),
                timeElement(last),
                timeElement(list[0]?.created_at),
              ];
            }),
            { empty: 'No heartbeats: no worker process is running.', caption: 'Heartbeats per process' },
          ),
        ),
      );
    }
  };
  await refresh();
  view.every(3000, refresh);
};
