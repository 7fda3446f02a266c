import { REQUEST_STATES, type RequestState } from '../../domain/request/request.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { requestsCollection, requestsHistoryCollection, type RequestDocument } from './requestsProjection.ts';
import { transferStatsCollection, type TransferStatDocument } from './transferStatsProjection.ts';

/**
 * What `dms transfers status` shows: the active requests per state and per link (source →
 * destination, `?` before a source is chosen), the oldest request in each state that waits for
 * the conveyor, and what failed in the last hour (transfers the tools reported failed, per link,
 * and requests archived in a failure state).
 */
export type TransferStatus = Readonly<{
  at: string;
  states: Readonly<Partial<Record<RequestState, number>>>;
  links: readonly Readonly<{
    source: string;
    destination: string;
    states: Readonly<Partial<Record<RequestState, number>>>;
  }>[];
  oldestWaiting: readonly Readonly<{
    state: RequestState;
    requestId: string;
    scope: string;
    name: string;
    destination: string;
    requestedAt: string;
  }>[];
  failuresLastHour: Readonly<{
    transfersFailed: readonly Readonly<{ source: string; destination: string; activity: string; files: number }>[];
    archived: Readonly<Partial<Record<RequestState, number>>>;
  }>;
}>;

/** The states in which a request waits for the conveyor to act. */
const WAITING_STATES: readonly RequestState[] = ['PREPARING', 'WAITING', 'QUEUED', 'SUBMITTING'];
const FAILURE_STATES: readonly RequestState[] = [
  'FAILED',
  'LOST',
  'SUBMISSION_FAILED',
  'NO_SOURCES',
  'ONLY_TAPE_SOURCES',
  'MISMATCH_SCHEME',
  'SUBMITTING',
];

export const transferStatus = async (readModels: ReadModels, now: Date): Promise<TransferStatus> => {
  const active = readModels.collection<RequestDocument>(requestsCollection);
  const states: Partial<Record<RequestState, number>> = {};
  const links = new Map<
    string,
    { source: string; destination: string; states: Partial<Record<RequestState, number>> }
  >();
  for (const state of REQUEST_STATES) {
    const count = await active.count({ state });
    if (count === 0) continue;
    states[state] = count;
    for await (const request of active.find({ state }, { sort: { state: 1, requested_at: 1, _id: 1 } })) {
      const source = request.source_rse ?? '?';
      const key = `${source} ${request.dest_rse}`;
      const link = links.get(key) ?? { source, destination: request.dest_rse, states: {} };
      link.states[state] = (link.states[state] ?? 0) + 1;
      links.set(key, link);
    }
  }
  const oldestWaiting: TransferStatus['oldestWaiting'][number][] = [];
  for (const state of WAITING_STATES) {
    const oldest = await active.findOne({ state }, { sort: { state: 1, requested_at: 1, _id: 1 } });
    if (oldest)
      oldestWaiting.push({
        state,
        requestId: oldest.id,
        scope: oldest.scope,
        name: oldest.name,
        destination: oldest.dest_rse,
        requestedAt: oldest.requested_at,
      });
  }
  const hourAgo = new Date(now.getTime() - 3_600_000).toISOString();
  const failed = new Map<string, { source: string; destination: string; activity: string; files: number }>();
  const names = new Map<string, string>();
  for await (const rse of readModels.collection<RseDocument>(rsesCollection).find({})) names.set(rse.id, rse.rse);
  for await (const stat of readModels
    .collection<TransferStatDocument>(transferStatsCollection)
    .find({ timestamp: { $gte: hourAgo } })) {
    if (!stat.files_failed) continue;
    const source = stat.src_rse_id ? (names.get(stat.src_rse_id) ?? stat.src_rse_id) : '?';
    const destination = names.get(stat.dest_rse_id) ?? stat.dest_rse_id;
    const key = `${source} ${destination} ${stat.activity}`;
    const entry = failed.get(key) ?? { source, destination, activity: stat.activity, files: 0 };
    entry.files += stat.files_failed;
    failed.set(key, entry);
  }
  const archived: Partial<Record<RequestState, number>> = {};
  const history = readModels.collection<RequestDocument>(requestsHistoryCollection);
  for (const state of FAILURE_STATES) {
    const count = await history.count({ state, updated_at: { $gte: hourAgo } });
    if (count > 0) archived[state] = count;
  }
  return {
    at: now.toISOString(),
    states,
    links: [...links.values()].sort((a, b) => (a.source + a.destination < b.source + b.destination ? -1 : 1)),
    oldestWaiting,
    failuresLastHour: { transfersFailed: [...failed.values()], archived },
  };
};
