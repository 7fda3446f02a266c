import type { Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { RequestState } from './request.ts';
import type { Topology } from './topology.ts';
import { applicableLimits, type BoundLimit } from './transferLimitBinding.ts';

/**
 * The conveyor-throttler (Rucio's throttler, behaviour-reference §4.5 and behaviour rule 24):
 * releases WAITING requests as their transfer limits allow.
 *
 * 1. Per limit: `active` = QUEUED, SUBMITTING and SUBMITTED requests it covers, `waiting` the
 *    WAITING ones, overall and per account.
 * 2. Residual capacity: no maximum → all; `active < 0.8 × max` → `max − active`; otherwise
 *    nothing (releases come in bulks, not one by one as transfers end).
 * 3. Fair share: accounts by waiting count ascending, each `min(waiting, ceil(left / accounts left))`.
 * 4. Waiting requests subject to the same limits form a group (Rucio's groups by source,
 *    destination and activity, merged where no limit tells them apart); a group takes the
 *    smallest residual of its limits, `grouped_fifo` over `fifo`, the smallest volume and
 *    deadline. Requests to a destination closed for writing or from a source closed for reading
 *    stay.
 * 5. `fifo`: per account, the oldest requests. `grouped_fifo`: requests go by dataset (the file's
 *    first-attached dataset, or the file alone): (a) with a deadline and a source limit, whole
 *    datasets waiting longer than the deadline; (b) whole datasets, oldest first, while the count
 *    released before each is below the capacity (a dataset may overshoot); (c) with a volume and a
 *    destination, datasets whose bytes fit in the volume minus the bytes QUEUED or SUBMITTED to it.
 * 6. Requests WAITING for more than a day go back to PREPARING, to find a source again.
 *
 * The observed counts are recorded on each limit when they change.
 */

export type ReleaseRequest = WorkflowOutput<'ReleaseRequest', { requestId: string }>;
export type ReturnRequestToPreparing = WorkflowOutput<'ReturnRequestToPreparing', { requestId: string }>;
export type RecordTransferLimitStats = WorkflowOutput<
  'RecordTransferLimitStats',
  { id: string; transfers: number; waitings: number }
>;

export type ThrottlerOutput = ReleaseRequest | ReturnRequestToPreparing | RecordTransferLimitStats;

export type ThrottledRequest = Readonly<{
  id: string;
  state: RequestState;
  sourceRseId: string | null;
  destRseId: string;
  activity: string;
  account: string;
  bytes: number;
  requestedAt: string;
  /** When the request entered its state. */
  changedAt: string;
  /** The dataset the file was first attached to (grouped_fifo), null for a file in none. */
  dataset: string | null;
  scope: string;
  name: string;
}>;

export type ThrottlerFacts = Readonly<{
  topology: Topology;
  limits: readonly BoundLimit[];
  /** Requests QUEUED, SUBMITTING, SUBMITTED or WAITING. */
  requests: readonly ThrottledRequest[];
}>;

/** A WAITING request untouched this long goes back to PREPARING (Rucio: one day). */
export const STALE_WAITING_MS = 86_400_000;

type LimitStat = {
  limit: BoundLimit;
  active: number;
  waiting: number;
  residual: number;
  accounts: Map<string, { active: number; waiting: number; residual: number }>;
};

const residualOf = (limit: BoundLimit, active: number): number => {
  if (limit.maxTransfers === null) return Number.POSITIVE_INFINITY;
  return active < 0.8 * limit.maxTransfers ? limit.maxTransfers - active : 0;
};

/** Rucio's `_split_threshold_per_account`. */
const splitPerAccount = (stat: LimitStat): void => {
  let left = stat.residual;
  let accountsLeft = stat.accounts.size;
  const ordered = [...stat.accounts].sort(([a, x], [b, y]) => x.waiting - y.waiting || (a < b ? -1 : 1));
  for (const [, account] of ordered) {
    const share = Math.ceil(left / accountsLeft);
    account.residual = Math.min(account.waiting, share);
    accountsLeft -= 1;
    left -= account.residual;
  }
};

const byAge = (a: ThrottledRequest, b: ThrottledRequest): number =>
  a.requestedAt < b.requestedAt ? -1 : a.requestedAt > b.requestedAt ? 1 : a.id < b.id ? -1 : 1;

type Dataset = { key: string; requests: ThrottledRequest[]; oldest: string; bytes: number };

const datasetsOf = (requests: readonly ThrottledRequest[]): Dataset[] => {
  const datasets = new Map<string, Dataset>();
  for (const request of requests) {
    const key = request.dataset ?? `${request.scope}:${request.name}`;
    const dataset = datasets.get(key) ?? { key, requests: [], oldest: request.requestedAt, bytes: 0 };
    dataset.requests.push(request);
    dataset.bytes += request.bytes;
    if (request.requestedAt < dataset.oldest) dataset.oldest = request.requestedAt;
    datasets.set(key, dataset);
  }
  return [...datasets.values()].sort((a, b) =>
    a.oldest < b.oldest ? -1 : a.oldest > b.oldest ? 1 : a.key < b.key ? -1 : 1,
  );
};

const releaseGroupedFifo = (
  group: readonly ThrottledRequest[],
  count: number,
  limits: readonly BoundLimit[],
  deadline: number | null,
  volume: number | null,
  now: number,
  activeBytesTo: (destRseId: string) => number,
): ThrottledRequest[] => {
  const released = new Set<ThrottledRequest>();
  const datasets = datasetsOf(group);
  let left = count;
  if (deadline && limits.some((limit) => limit.direction === 'SOURCE')) {
    for (const dataset of datasets) {
      if (Date.parse(dataset.oldest) >= now - deadline * 3_600_000) continue;
      for (const request of dataset.requests) released.add(request);
      left -= dataset.requests.length;
    }
  }
  let before = 0;
  for (const dataset of datasets) {
    if (before >= left) break;
    for (const request of dataset.requests) released.add(request);
    before += dataset.requests.length;
  }
  if (volume && limits.some((limit) => limit.direction === 'DESTINATION')) {
    for (const destRseId of new Set(group.map((request) => request.destRseId))) {
      const free = volume - activeBytesTo(destRseId);
      let cumulated = 0;
      for (const dataset of datasetsOf(group.filter((request) => request.destRseId === destRseId))) {
        if (dataset.bytes > free) continue;
        cumulated += dataset.bytes;
        if (cumulated > free) break;
        for (const request of dataset.requests) released.add(request);
      }
    }
  }
  return [...released];
};

export const throttler: Workflow<Readonly<{ now: string }>, ThrottlerFacts, ThrottlerOutput> = {
  name: 'conveyor-throttler',
  decide: ({ now }, { topology, limits, requests }) => {
    const nowMs = Date.parse(now);
    // 1. What each limit covers.
    const stats = new Map<string, LimitStat>(
      limits.map((limit) => [limit.id, { limit, active: 0, waiting: 0, residual: 0, accounts: new Map() }]),
    );
    const limitsOf = new Map<ThrottledRequest, BoundLimit[]>();
    for (const request of requests) {
      const applicable = applicableLimits(limits, request.sourceRseId, request.destRseId, request.activity);
      limitsOf.set(request, applicable);
      for (const limit of applicable) {
        const stat = stats.get(limit.id)!;
        const account = stat.accounts.get(request.account) ?? { active: 0, waiting: 0, residual: 0 };
        stat.accounts.set(request.account, account);
        if (request.state === 'WAITING') {
          stat.waiting += 1;
          account.waiting += 1;
        } else {
          stat.active += 1;
          account.active += 1;
        }
      }
    }
    // 2. and 3. Residual capacities, overall and per account.
    for (const stat of stats.values()) {
      stat.residual = residualOf(stat.limit, stat.active);
      splitPerAccount(stat);
    }
    const activeBytes = new Map<string, number>();
    for (const request of requests) {
      if (request.state === 'QUEUED' || request.state === 'SUBMITTED')
        activeBytes.set(request.destRseId, (activeBytes.get(request.destRseId) ?? 0) + request.bytes);
    }
    // 4. Groups of waiting requests under the same limits.
    const groups = new Map<string, { limits: BoundLimit[]; requests: ThrottledRequest[] }>();
    for (const request of requests) {
      if (request.state !== 'WAITING') continue;
      const dest = topology.rse(request.destRseId);
      const source = request.sourceRseId ? topology.rse(request.sourceRseId) : undefined;
      if (!dest || !dest.properties.availability_write || (source && !source.properties.availability_read)) continue;
      const applicable = limitsOf.get(request)!;
      const key = applicable
        .map((limit) => limit.id)
        .sort()
        .join(',');
      const group = groups.get(key) ?? { limits: applicable, requests: [] };
      group.requests.push(request);
      groups.set(key, group);
    }
    const released: ThrottledRequest[] = [];
    const ordered = [...groups.values()].map((group) => ({ ...group, requests: [...group.requests].sort(byAge) }));
    for (const group of ordered.sort((a, b) => byAge(a.requests[0]!, b.requests[0]!))) {
      const groupStats = group.limits.map((limit) => stats.get(limit.id)!);
      const toRelease = Math.min(Number.POSITIVE_INFINITY, ...groupStats.map((stat) => stat.residual));
      const minOf = (values: (number | null)[]) =>
        values
          .filter((value): value is number => value !== null)
          .reduce<number | null>((min, value) => (min === null || value < min ? value : min), null);
      const strategy = group.limits.some((limit) => limit.strategy === 'grouped_fifo') ? 'grouped_fifo' : 'fifo';
      const waiting = group.requests;
      let groupReleased: ThrottledRequest[];
      // 5. Release.
      if (toRelease <= 0) groupReleased = [];
      else if (toRelease === Number.POSITIVE_INFINITY) groupReleased = waiting;
      else if (strategy === 'grouped_fifo') {
        groupReleased = releaseGroupedFifo(
          waiting,
          toRelease,
          group.limits,
          minOf(group.limits.map((limit) => limit.deadline)),
          minOf(group.limits.map((limit) => limit.volume)),
          nowMs,
          (dest) => activeBytes.get(dest) ?? 0,
        );
      } else {
        groupReleased = [];
        const accounts = [...new Set(waiting.map((request) => request.account))].sort();
        for (const account of accounts) {
          const share = Math.min(toRelease, ...groupStats.map((stat) => stat.accounts.get(account)?.residual ?? 0));
          if (share <= 0) continue;
          const taken = waiting.filter((request) => request.account === account).slice(0, share);
          groupReleased.push(...taken);
          for (const stat of groupStats) {
            const accountStat = stat.accounts.get(account);
            if (accountStat) accountStat.residual -= taken.length;
          }
        }
      }
      for (const stat of groupStats) stat.residual -= groupReleased.length;
      released.push(...groupReleased);
    }
    const outputs: ThrottlerOutput[] = released
      .sort(byAge)
      .map((request) => ({ type: 'ReleaseRequest', data: { requestId: request.id } }));
    // 6. Stale waiting requests.
    const releasedIds = new Set(released.map((request) => request.id));
    for (const request of [...requests].sort(byAge)) {
      if (
        request.state === 'WAITING' &&
        !releasedIds.has(request.id) &&
        Date.parse(request.changedAt) < nowMs - STALE_WAITING_MS
      ) {
        outputs.push({ type: 'ReturnRequestToPreparing', data: { requestId: request.id } });
      }
    }
    for (const stat of stats.values()) {
      if (stat.limit.transfers !== stat.active || stat.limit.waitings !== stat.waiting) {
        outputs.push({
          type: 'RecordTransferLimitStats',
          data: { id: stat.limit.id, transfers: stat.active, waitings: stat.waiting },
        });
      }
    }
    return outputs;
  },
};
