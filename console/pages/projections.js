import { getJson, part } from '../lib/api.js';
import {
  badge,
  confirmDialog,
  errorBox,
  formatCount,
  formatTime,
  h,
  keepFocus,
  pageHead,
  progressBar,
  replace,
  section,
  table,
} from '../lib/dom.js';
import { sparkline } from '../lib/charts.js';

/**
 * The read models for operators: each projection's version, serving generation, checkpoint, the
 * head of the log, its lag with a sparkline of the last minutes (sampled by this page), its
 * status, and a rebuild (root) with its live progress and the switch-over to the new generation.
 */
export const title = 'Projections';

/** Lag samples kept per projection: a second apart, two minutes. */
const SAMPLES = 120;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  /** @type {Map<string, number[]>} */
  const lags = new Map();
  /** @type {Map<string, { generation: number, at: Date }>} */
  const switched = new Map();
  /** @type {Map<string, number>} */
  const generations = new Map();
  const summary = h('div', { class: 'tiles' });
  const body = h('div', { id: 'projection-table' });
  const message = h('div', { 'aria-live': 'polite' });
  replace(
    view.main,
    pageHead(
      'Projections',
      'The read models answering every GET, each built from the event log. A rebuild replays the whole log into a new generation beside the serving one, then switches reads over.',
    ),
    summary,
    message,
    section('Read models', body),
  );

  /** The rebuild this page started, until it has switched over. */
  let started = '';

  /** @param {string} name */
  const rebuild = async (name) => {
    const answer = await confirmDialog({
      title: `Rebuild ${name}?`,
      body: [
        h(
          'p',
          null,
          'The whole event log is replayed into a new generation of this read model, beside the one that serves reads; reads switch over when it has caught up, and the old generation is dropped.',
        ),
        h('p', null, 'It costs the projector time in proportion to the log; reads are not interrupted.'),
      ],
      confirm: `Rebuild ${name}`,
      danger: true,
    });
    if (!answer) return;
    started = name;
    replace(message);
    try {
      const answer = await getJson(`/admin/projections/${part(name)}/rebuild`, { method: 'POST' });
      replace(
        message,
        h(
          'div',
          { class: 'alert info', role: 'status' },
          answer.already_under_way
            ? `A rebuild of ${name} was already under way (generation ${answer.generation}).`
            : `Rebuilding ${name} into generation ${answer.generation}.`,
          answer.projector_running ? '' : ' No projector is running: it starts when one does.',
        ),
      );
      await refresh();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  const refresh = async () => {
    const projections = await getJson('/admin/projections');
    const now = new Date();
    for (const projection of projections) {
      const samples = lags.get(projection.name) ?? [];
      samples.push(projection.lag);
      if (samples.length > SAMPLES) samples.shift();
      lags.set(projection.name, samples);
      const before = generations.get(projection.name);
      if (before !== undefined && projection.generation !== null && projection.generation !== before)
        switched.set(projection.name, { generation: projection.generation, at: now });
      if (projection.generation !== null) generations.set(projection.name, projection.generation);
    }
    const done = started ? switched.get(started) : undefined;
    if (done) {
      replace(
        message,
        h(
          'div',
          { class: 'alert good', role: 'status' },
          `The rebuild of ${started} is done: reads switched to generation ${done.generation}.`,
        ),
      );
      started = '';
    }
    const head = Math.max(0, ...projections.map((/** @type {any} */ projection) => projection.head));
    const behind = projections.filter((/** @type {any} */ projection) => projection.lag > 0).length;
    const rebuilding = projections.filter((/** @type {any} */ projection) => projection.rebuild).length;
    const failed = projections.filter((/** @type {any} */ projection) => projection.status === 'failed').length;
    replace(
      summary,
      tile('Head of the log', formatCount(head)),
      tile('Projections', formatCount(projections.length)),
      tile('Behind the head', formatCount(behind), behind > 0 ? 'busy' : 'good'),
      tile('Rebuilding', formatCount(rebuilding), rebuilding > 0 ? 'busy' : ''),
      tile('Failed', formatCount(failed), failed > 0 ? 'bad' : 'good'),
    );
    keepFocus(body, () =>
      replace(
        body,
        table(
          [
            'Projection',
            'Version',
            'Generation',
            'Checkpoint',
            'Head',
            'Lag',
            'Lag, last 2 min',
            'Status',
            'Rebuild',
            '',
          ],
          projections.map((/** @type {any} */ projection) => {
            const rebuildCell = projection.rebuild
              ? h(
                  'div',
                  { class: 'rebuild', 'data-projection': projection.name },
                  progressBar(projection.rebuild.progress ?? 0, `Rebuild of ${projection.name}`),
                  h(
                    'span',
                    { class: 'small muted' },
                    `generation ${projection.rebuild.generation}, ${formatCount(projection.rebuild.lag)} events to go`,
                  ),
                  projection.rebuild.error ? h('span', { class: 'bad-text small' }, projection.rebuild.error) : null,
                )
              : switched.has(projection.name)
                ? h(
                    'span',
                    { class: 'switched', 'data-projection': projection.name },
                    `✓ switched to generation ${switched.get(projection.name)?.generation} at ${formatTime(switched.get(projection.name)?.at)}`,
                  )
                : h('span', { class: 'muted' }, '–');
            return [
              h('span', { class: 'mono' }, projection.name),
              String(projection.version),
              projection.generation === null ? '–' : String(projection.generation),
              formatCount(projection.checkpoint),
              formatCount(projection.head),
              formatCount(projection.lag),
              sparkline(
                lags.get(projection.name) ?? [],
                `Lag of ${projection.name} over the last samples: now ${projection.lag}`,
              ),
              [
                badge(projection.status),
                projection.error ? h('div', { class: 'bad-text small' }, projection.error) : null,
              ],
              rebuildCell,
              view.who.root
                ? h(
                    'button',
                    {
                      type: 'button',
                      class: 'button small',
                      disabled: Boolean(projection.rebuild),
                      onclick: () => rebuild(projection.name),
                      'aria-label': `Rebuild ${projection.name}`,
                    },
                    'Rebuild',
                  )
                : '',
            ];
          }),
          { numeric: [1, 2, 3, 4, 5], caption: 'Projections' },
        ),
      ),
    );
  };
  await refresh();
  view.every(1000, refresh);
};

/**
 * @param {string} label
 * @param {string} value
 * @param {string} [tone]
 */
export const tile = (label, value, tone = '') =>
  h(
    'div',
    { class: `tile ${tone}` },
    h('div', { class: 'tile-value' }, value),
    h('div', { class: 'tile-label' }, label),
  );
