import { allLines, didPath, getJson, part } from '../lib/api.js';
import {
  accountLink,
  badge,
  didLink,
  errorBox,
  fields,
  formatCount,
  h,
  keepFocus,
  link,
  notice,
  pageHead,
  replace,
  rseLink,
  ruleLink,
  section,
  table,
  timeElement,
} from '../lib/dom.js';
import { ruleActions } from '../lib/ruleActions.js';
import { can } from '../lib/session.js';
import { lockBar, locksPerRse } from '../lib/ruleViews.js';
import { timelineEntry, timelineList } from '../lib/timeline.js';

/**
 * A rule, followed until it settles: its state and options, its locks per RSE and state, the
 * files still replicating with their transfer requests, the analysis of stuck locks, and its
 * history (the audit's events for admins; the rule history rows for everyone else).
 */
export const title = 'Rule';

/** Transfer requests looked up for the files still replicating, at most. */
const REQUESTS_SHOWN = 20;

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const [ruleId = ''] = view.params;
  const also = (view.query.get('also') ?? '').split(',').filter(Boolean);
  /** The heading until the rule is read, then the rule's. */
  let head = h('div', { class: 'page-head' });
  const actionsBox = h('div', { id: 'rule-actions' });
  const outcome = h('div', { id: 'rule-outcome', 'aria-live': 'polite' });
  const overview = h('div', { class: 'grid two' });
  const locksBox = h('div');
  const replicatingBox = h('div');
  const analysisBox = h('div');
  const historyBox = h('div');
  replace(
    view.main,
    head,
    actionsBox,
    outcome,
    also.length > 0
      ? h(
          'div',
          { class: 'alert info' },
          'The request made more rules, one per DID: ',
          also.map((id) => [ruleLink(id), ' ']),
        )
      : null,
    overview,
    locksBox,
    replicatingBox,
    analysisBox,
    historyBox,
  );

  /**
   * The rule as last read. The action bar's buttons act on it, so a refresh that would draw the
   * same bar leaves the one on screen: replacing it every 1.5 s could fall between a press and
   * its release, and the click would be lost.
   * @type {any}
   */
  const latest = {};
  const refresh = async () => {
    const rule = await getJson(`/rules/${part(ruleId)}`);
    for (const key of Object.keys(latest)) delete latest[key];
    Object.assign(latest, rule);
    const locks = await allLines(`/rules/${part(ruleId)}/locks`, 20_000);
    const freshHead = pageHead(
      [
        h('span', { class: 'mono' }, rule.id),
        ' ',
        h('span', { id: 'rule-state', class: 'state-big' }, badge(rule.state)),
      ],
      null,
      {
        eyebrow: 'replication rule',
        titleAttributes: { class: 'rule-title' },
        summary: [
          `${rule.copies} ${rule.copies === 1 ? 'copy' : 'copies'} of `,
          didLink(rule.scope, rule.name),
          ' on ',
          h('code', null, rule.rse_expression),
        ],
        actions: can(view.who, 'readHistory')
          ? link(`#/history/rule/${encodeURIComponent(rule.id)}`, 'History and past states', { class: 'button' })
          : null,
      },
    );
    head.replaceWith(freshHead);
    head = freshHead;
    const bar = ruleActions(latest, view, {
      done: (result) => {
        replace(outcome, result);
        // A denied rule is gone at once: the page says so under the result instead of failing.
        refresh()
          .then(follow)
          .catch(() => {
            outcome.append(notice('info', 'The rule no longer exists.'));
            replace(actionsBox);
          });
      },
    });
    if ((bar?.outerHTML ?? '') !== (actionsBox.firstElementChild?.outerHTML ?? ''))
      await keepFocus(actionsBox, () => replace(actionsBox, bar));
    replace(
      overview,
      section('Progress', [
        lockBar(rule),
        fields([
          ['State', badge(rule.state)],
          ['Error', rule.error ? h('span', { class: 'bad-text' }, rule.error) : null],
          ['Stuck since', rule.stuck_at ? timeElement(rule.stuck_at) : null],
          ['Updated', timeElement(rule.updated_at)],
        ]),
      ]),
      section(
        'Options',
        fields([
          ['Account', accountLink(rule.account)],
          ['Grouping', rule.grouping],
          ['Activity', rule.activity],
          ['Created', timeElement(rule.created_at)],
          ['Expires', rule.expires_at ? timeElement(rule.expires_at) : 'never'],
          ['Locked', rule.locked ? 'yes' : 'no'],
          ['Comment', rule.comments],
          ['Child rule', rule.child_rule_id ? ruleLink(rule.child_rule_id) : null],
        ]),
      ),
    );
    replace(locksBox, section('Locks per RSE and state', locksPerRse(locks)));
    const replicating = locks.filter((lock) => lock.state === 'REPLICATING');
    const requests = await Promise.all(
      replicating
        .slice(0, REQUESTS_SHOWN)
        .map((lock) => getJson(`/requests/${didPath(lock.scope, lock.name)}/${part(lock.rse)}`).catch(() => null)),
    );
    replace(
      replicatingBox,
      section(`Files still replicating (${formatCount(replicating.length)})`, [
        table(
          ['File', 'To', 'Transfer', 'Source', 'Attempt', 'Since'],
          replicating.slice(0, REQUESTS_SHOWN).map((lock, index) => {
            const request = requests[index];
            return [
              didLink(lock.scope, lock.name),
              rseLink(lock.rse),
              request ? badge(request.state) : h('span', { class: 'muted' }, 'no request yet'),
              // A multihop transfer shows its path, source first (the API's transfer_path).
              request?.transfer_path
                ? h('span', { class: 'path', title: 'multihop path' }, request.transfer_path.join(' → '))
                : request?.source_rse
                  ? rseLink(request.source_rse)
                  : '–',
              request ? String((request.retry_count ?? 0) + 1) : '–',
              request ? timeElement(request.updated_at ?? request.created_at) : '–',
            ];
          }),
          { empty: 'Every file is where the rule wants it.', caption: 'Files still replicating' },
        ),
        replicating.length > REQUESTS_SHOWN
          ? h('p', { class: 'muted' }, `The first ${REQUESTS_SHOWN} of ${formatCount(replicating.length)}.`)
          : null,
      ]),
    );
    if (rule.locks_stuck_cnt > 0 || rule.state === 'STUCK') {
      const analysis = await getJson(`/rules/${part(ruleId)}/analysis`).catch((error) => ({
        rule_error: error.message,
        transfers: [],
      }));
      replace(
        analysisBox,
        section('Why it is stuck', [
          h('p', null, analysis.rule_error ?? ''),
          table(
            ['File', 'RSE', 'Attempts', 'Last error', 'Last time', 'Sources'],
            (analysis.transfers ?? []).map((/** @type {any} */ transfer) => [
              didLink(transfer.scope, transfer.name),
              rseLink(transfer.rse),
              String(transfer.attempts ?? '–'),
              h('span', { class: 'bad-text' }, transfer.last_error ?? '–'),
              timeElement(transfer.last_time),
              (transfer.sources ?? []).map((/** @type {any} */ source) =>
                h('span', { class: 'source' }, source.rse, source.available ? '' : ' (unavailable)', ' '),
              ),
            ]),
            { empty: 'No transfer has failed yet.', caption: 'Stuck locks' },
          ),
        ]),
      );
    } else replace(analysisBox);
    return rule;
  };

  /** The state last shown, for the screen reader's announcement of a change. */
  let shownState = '';
  let following = false;
  /** Follows the rule until it is OK (again, after an action moved it). @param {any} [now] */
  function follow(now) {
    if (following || !now || now.state === 'OK') return;
    following = true;
    view.every(1500, async () => {
      /** @type {any} */
      let again;
      try {
        await keepFocus(view.main, async () => {
          again = await refresh();
          await showHistory(historyBox, again, view);
        });
      } catch (error) {
        // A rule deleted meanwhile (denied, cleaned): say so where the rule was.
        replace(outcome, errorBox(error));
        following = false;
        return false;
      }
      const live = /** @type {HTMLElement | null} */ (document.getElementById('live-status'));
      if (live && again.state !== shownState) live.textContent = `Rule ${again.id} is ${again.state}`;
      shownState = again.state;
      following = again.state !== 'OK';
      return following;
    });
  }
  const rule = await refresh();
  shownState = rule.state;
  await showHistory(historyBox, rule, view);
  follow(rule);
};

/**
 * The audit's events of the rule for admins, its rule history rows for everyone else.
 * @param {HTMLElement} target
 * @param {any} rule
 * @param {import('../app.js').View} view
 */
const showHistory = async (target, rule, view) => {
  if (can(view.who, 'readHistory')) {
    try {
      const events = await allLines(`/audit/rules/${part(rule.id)}/events`, 200);
      const list = timelineList('Events of the rule');
      for (const event of events.reverse()) list.appendChild(timelineEntry(event));
      const open = new Set(
        [...target.querySelectorAll('li.event details[open]')].map((node) => node.parentElement?.dataset.position),
      );
      for (const entry of list.querySelectorAll('li.event')) {
        if (open.has(/** @type {HTMLElement} */ (entry).dataset.position))
          entry.querySelector('details')?.setAttribute('open', '');
      }
      replace(
        target,
        section(`History (newest first${events.length >= 200 ? ', the first 200' : ''})`, list, {
          actions: link(`#/history/rule/${encodeURIComponent(rule.id)}`, 'Full history and past states', {
            class: 'button small',
          }),
        }),
      );
      return;
    } catch (error) {
      replace(target, section('History', errorBox(error)));
      return;
    }
  }
  const rows = await allLines(`/rules/${didPath(rule.scope, rule.name)}/history`, 500).catch(() => []);
  replace(
    target,
    section(
      'History',
      table(
        ['When', 'State', 'Locks OK / replicating / stuck', 'Account'],
        rows
          .filter((row) => row.rule_id === rule.id)
          .reverse()
          .map((row) => [
            timeElement(row.updated_at ?? row.created_at),
            badge(row.state),
            `${row.locks_ok_cnt} / ${row.locks_replicating_cnt} / ${row.locks_stuck_cnt}`,
            accountLink(row.account),
          ]),
        { empty: 'No history recorded.', caption: 'Rule history' },
      ),
    ),
  );
};
