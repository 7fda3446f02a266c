import { settingValue, SETTINGS, type ConfigSections } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import type { FinishedRequest } from '../../domain/request/finisher.ts';
import type { SubmittedRequest } from '../../domain/request/poller.ts';
import {
  FINISHED_REQUEST_STATES,
  requestStreamName,
  type RankedSource,
  type RequestState,
  type RequestType,
} from '../../domain/request/request.ts';
import { textOrNull } from '../../domain/shared/narrowing.ts';
import type { CandidateReplica, SelectionRequest } from '../../domain/request/sourceSelection.ts';
import type { ThrottledRequest } from '../../domain/request/throttler.ts';
import { Topology, type TransferRse } from '../../domain/request/topology.ts';
import type { TransferLimit } from '../../domain/request/transferLimit.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import { accountsCollection, type AccountDocument } from '../account/accounts.ts';
import { didContentsCollection, type ContentDocument } from '../did/didContents.ts';
import { replicasCollection, BY_FILE, type ReplicaDocument } from '../replica/replicaDocuments.ts';
import { rseDistancesCollection, rsesCollection, type RseDistanceDocument, type RseDocument } from '../rse/rses.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { requestsCollection, type RequestDocument } from './requests.ts';
import { transferLimitsCollection, type TransferLimitDocument } from './transferLimits.ts';

/**
 * What the conveyor's daemons read: requests by state in pages, the topology of one cycle, the
 * sources of a page of requests, the transfer limits. Each answers in the shapes the workflows
 * of domain/request take.
 */

const requests = (readModels: ReadModels) => readModels.collection<RequestDocument>(requestsCollection);

/** Where a page of requests ended: the next page starts after it. */
export type PageMark = Readonly<{ at: string; id: string }>;

const after = (field: string, mark: PageMark | undefined): Filter =>
  mark ? { $or: [{ [field]: { $gt: mark.at } }, { [field]: mark.at, _id: { $gt: mark.id } }] } : {};

/**
 * Requests in a state, oldest first by `field` (`requested_at` for the work queues, `changed_at`
 * where the time in the state matters), a page at a time; with `before`, only those whose `field`
 * is older (the finisher's stale SUBMITTING requests: the fresh ones, often a whole page the
 * submitter is working on, are not read at all).
 */
export const requestsInState = (
  readModels: ReadModels,
  state: RequestState,
  field: 'requested_at' | 'changed_at',
  limit: number,
  mark?: PageMark,
  before?: string,
): Promise<RequestDocument[]> =>
  requests(readModels)
    .find(
      { state, ...(before === undefined ? {} : { [field]: { $lt: before } }), ...after(field, mark) },
      { sort: { state: 1, [field]: 1, _id: 1 }, limit },
    )
    .toArray();

/**
 * The QUEUED requests of one type (the submitter's transfers, the stager's STAGEIN requests),
 * oldest first, a page at a time, without those waiting for the copy before them on a multihop
 * path (Rucio's submitter skips requests that are another hop's next hop).
 */
export const queuedRequests = (
  readModels: ReadModels,
  requestType: RequestType,
  limit: number,
  mark?: PageMark,
): Promise<RequestDocument[]> =>
  requests(readModels)
    .find(
      { state: 'QUEUED', request_type: requestType, waiting_for_hop: null, ...after('requested_at', mark) },
      { sort: { state: 1, request_type: 1, requested_at: 1, _id: 1 }, limit },
    )
    .toArray();

export const pageMarkOf = (
  page: readonly RequestDocument[],
  field: 'requested_at' | 'changed_at',
): PageMark | undefined => {
  const last = page[page.length - 1];
  return last ? { at: last[field] ?? last.requested_at, id: last._id } : undefined;
};

const rankingsOf = (document: RequestDocument): readonly RankedSource[] => document.sources ?? [];

/**
 * The stream of each request of a page, by id: what the conveyor's commands address. A document
 * of a generation built before batches names none: its request has a stream of its own.
 */
export const requestStreams = (page: readonly RequestDocument[]): Map<string, string> =>
  new Map(page.map((document) => [document.id, document.stream ?? requestStreamName(document.id)]));

/** A request as source selection sees it. */
export const selectionRequestOf = (document: RequestDocument): SelectionRequest => ({
  id: document.id,
  requestType: document.request_type,
  scope: document.scope,
  name: document.name,
  destRseId: document.dest_rse_id,
  account: document.account,
  sourceReplicaExpression: textOrNull(document.attributes.source_replica_expression),
  allowTapeSource: document.attributes.allow_tape_source !== false,
  rankings: rankingsOf(document),
  preferredSourceRseId: document.source_rse_id,
});

export const submittedRequestOf = (document: RequestDocument): SubmittedRequest => ({
  requestId: document.id,
  externalId: document.external_id ?? '',
  transfertool: document.transfertool ?? '',
  submittedAt: document.submitted_at ?? document.updated_at,
});

/** A request as the finisher's workflow sees it. */
export const finishedRequestOf = (document: RequestDocument): FinishedRequest => ({
  requestId: document.id,
  state: document.state,
  retryCount: document.retry_count,
  error: document.err_msg,
  changedAt: document.changed_at ?? document.updated_at,
  hasSource: document.source_rse_id !== null,
  ...(document.attributes.is_intermediate_hop === true ? { intermediateHop: true } : {}),
});

/** The states the finisher takes requests from: the finished ones, then SUBMITTING (retried past a bound). */
export const FINISHER_STATES: readonly RequestState[] = [...FINISHED_REQUEST_STATES, 'SUBMITTING'];

/** The AVAILABLE replicas of the requests' files, as candidate sources, by request id. */
export const candidateReplicas = async (
  readModels: ReadModels,
  page: readonly RequestDocument[],
): Promise<Map<string, CandidateReplica[]>> => {
  const keys = [...new Set(page.map((document) => document.didKey))];
  const byFile = new Map<string, CandidateReplica[]>();
  for (let start = 0; start < keys.length; start += 500) {
    const replicas = await readModels
      .collection<ReplicaDocument>(replicasCollection)
      .find({ didKey: { $in: keys.slice(start, start + 500) } }, { sort: BY_FILE })
      .toArray();
    for (const replica of replicas) {
      if (replica.state !== 'AVAILABLE') continue;
      byFile.set(replica.didKey, [
        ...(byFile.get(replica.didKey) ?? []),
        { rseId: replica.rse_id, path: replica.path },
      ]);
    }
  }
  return new Map(page.map((document) => [document.id, byFile.get(document.didKey) ?? []]));
};

/** Root and the accounts with an `admin` attribute (Rucio's transfer admins). */
const transferAdmins = async (readModels: ReadModels): Promise<Set<string>> => {
  const admins = await readModels
    .collection<AccountDocument>(accountsCollection)
    .find({ status: 'ACTIVE', attributes: { $elemMatch: { key: 'admin' } } })
    .toArray();
  return new Set(['root', ...admins.map((account) => account.account)]);
};

/** The storage elements, distances and settings one conveyor cycle works with. */
export const loadTopology = async (readModels: ReadModels, sections: ConfigSections): Promise<Topology> => {
  const rses = await readModels
    .collection<RseDocument>(rsesCollection)
    .find({ deleted: false }, { sort: { rse: 1 } })
    .toArray();
  const known = new Set(rses.map((rse) => rse.id));
  const distances = new Map<string, Map<string, number | null>>();
  for await (const row of readModels.collection<RseDistanceDocument>(rseDistancesCollection).find({})) {
    if (!known.has(row.srcRseId) || !known.has(row.destRseId)) continue;
    distances.set(row.srcRseId, (distances.get(row.srcRseId) ?? new Map()).set(row.destRseId, row.distance));
  }
  return new Topology({
    rses: rses.map((rse): TransferRse => ({
      id: rse.id,
      rse: rse.rse,
      properties: rse.properties,
      attributes: rse.attributes,
      protocols: rse.protocols,
    })),
    distances,
    transferAdmins: await transferAdmins(readModels),
    lfn2pfnDefault: settingValue(sections, SETTINGS.lfn2pfnDefault),
    defaultTransfertool: settingValue(sections, SETTINGS.conveyorTransfertool),
    multihop: {
      rseExpression: settingValue(sections, SETTINGS.multihopRseExpression),
      hopPenalty: settingValue(sections, SETTINGS.hopPenalty),
      maxHops: settingValue(sections, SETTINGS.multihopMaxHops) || null,
      tombstoneDelay: settingValue(sections, SETTINGS.multihopTombstoneDelay),
    },
  });
};

export const transferLimitOf = (document: TransferLimitDocument): TransferLimit => ({
  id: document.id,
  rseExpression: document.rse_expression,
  activity: document.activity,
  direction: document.direction,
  maxTransfers: document.max_transfers,
  volume: document.volume,
  deadline: document.deadline,
  strategy: document.strategy === 'grouped_fifo' ? 'grouped_fifo' : document.strategy === 'fifo' ? 'fifo' : null,
  transfers: document.transfers,
  waitings: document.waitings,
  createdAt: document.created_at,
  updatedAt: document.updated_at,
});

/** Every transfer limit, oldest first. */
export const transferLimits = async (readModels: ReadModels): Promise<TransferLimit[]> =>
  (
    await readModels
      .collection<TransferLimitDocument>(transferLimitsCollection)
      .find({}, { sort: { _id: 1 } })
      .toArray()
  )
    .map(transferLimitOf)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));

/** The dataset each file was first attached to (grouped_fifo), by file key. */
const firstDatasets = async (readModels: ReadModels, fileKeys: readonly string[]): Promise<Map<string, string>> => {
  const first = new Map<string, ContentDocument>();
  for (let start = 0; start < fileKeys.length; start += 500) {
    const edges = await readModels
      .collection<ContentDocument>(didContentsCollection)
      .find({ childKey: { $in: fileKeys.slice(start, start + 500) } })
      .toArray();
    for (const edge of edges) {
      const earlier = first.get(edge.childKey);
      if (edge.parentType === 'DATASET' && (!earlier || edge.created_at < earlier.created_at))
        first.set(edge.childKey, edge);
    }
  }
  return new Map([...first].map(([child, edge]) => [child, edge.parentKey]));
};

/**
 * What the throttler counts: every WAITING request and, when limits exist, every request
 * QUEUED, SUBMITTING or SUBMITTED, with the first dataset of each waiting file.
 */
export const throttledRequests = async (
  readModels: ReadModels,
  withActive: boolean,
): Promise<{ requests: ThrottledRequest[]; streams: Map<string, string> }> => {
  const states: RequestState[] = withActive ? ['WAITING', 'QUEUED', 'SUBMITTING', 'SUBMITTED'] : ['WAITING'];
  const documents: RequestDocument[] = [];
  for (const state of states)
    documents.push(
      ...(await requests(readModels)
        .find({ state }, { sort: { state: 1, requested_at: 1, _id: 1 } })
        .toArray()),
    );
  const datasets = await firstDatasets(readModels, [
    ...new Set(documents.filter((document) => document.state === 'WAITING').map((document) => document.didKey)),
  ]);
  const throttled = documents.map((document) => ({
    id: document.id,
    state: document.state,
    sourceRseId: document.source_rse_id,
    destRseId: document.dest_rse_id,
    activity: document.activity,
    account: document.account,
    bytes: document.bytes,
    requestedAt: document.requested_at,
    changedAt: document.changed_at ?? document.updated_at,
    dataset: datasets.get(didKey(document.scope, document.name)) ?? null,
    scope: document.scope,
    name: document.name,
  }));
  return { requests: throttled, streams: requestStreams(documents) };
};
