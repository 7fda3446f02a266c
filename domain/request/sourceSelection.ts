import { pfnFromProtocol, replicaPath } from '../rse/lfn2pfn.ts';
import type { RseProtocol } from '../rse/protocol.ts';
import { climbProblem } from '../shared/names.ts';
import type { Skipped, WorkflowOutput } from '../shared/workflow.ts';
import { RucioError } from '../shared/errors.ts';
import { pairOf, schemeFamily, transfertoolFor } from './protocolPairs.ts';
import type { RankedSource, RequestType, SourcelessState, SubmittedSource } from './request.ts';
import { attributeFlag, isTapeOrStaging, type Topology, type TransferRse } from './topology.ts';
import { shortestPaths, type PathHop, type TransferPath } from './transferPaths.ts';

/**
 * Rucio's source selection (`build_transfer_paths` with its default ranking strategies,
 * behaviour rule 23), for the preparer and the submitter alike. The candidates are the file's
 * AVAILABLE replicas on other RSEs; the strategies run in Rucio's order, filters dropping
 * sources and rankers adding a cost, and the sources are ordered by their cost vectors:
 *
 *  1. the request's source replica expression;        6. a path exists whose links share protocols;
 *  2. `availability_read`;                             7. no tape RSE inside a multihop path;
 *  3. `restricted_read` unless a transfer admin;       8. cost −ranking (+1 on tape);
 *  4. staging buffers (STAGEIN: stageinSelection.ts); 9. cost 0 disk, 1 tape;
 *  5. tape sources when `allow_tape_source` is false; 10. cost the path's distance; no path drops the source;
 *                                                     11. cost 0 direct, 1 multihop.
 *
 * Paths come from transferPaths.ts: direct links, or through multihop RSEs when the topology has
 * some. Nothing left: ONLY_TAPE_SOURCES if the tape filter dropped one, else MISMATCH_SCHEME if
 * the scheme filter did, else NO_SOURCES. A multihop path that passes through another source
 * starts there instead (Rucio's `__compress_multihops`). The first path gives the URLs; a direct
 * one from disk takes up to four more directly linked disk sources with a compatible scheme
 * (multi-source transfers); a multihop one names the copies before the request's own (`hops`).
 */

export type SelectionRequest = Readonly<{
  id: string;
  requestType: RequestType;
  scope: string;
  name: string;
  destRseId: string;
  account: string;
  sourceReplicaExpression: string | null;
  allowTapeSource: boolean;
  /** Rankings from earlier attempts, by RSE id (default 0). */
  rankings: readonly RankedSource[];
  /** Tried alone first when set (the preparer's choice, for the submitter). */
  preferredSourceRseId: string | null;
}>;

/** An AVAILABLE copy of the file; `path` is its stored path on a non-deterministic RSE. */
export type CandidateReplica = Readonly<{ rseId: string; path: string | null }>;

/** A copy of a multihop path before the request's own: to an intermediate RSE, from the one before. */
export type PlannedHop = Readonly<{
  destRseId: string;
  destRse: string;
  source: SubmittedSource;
  destUrl: string;
  transfertool: string;
}>;

export type SourceSelection =
  | Readonly<{
      kind: 'selected';
      /** The main source first, then the extra sources of a multi-source transfer. */
      sources: readonly SubmittedSource[];
      destUrl: string;
      transfertool: string;
      /** Multihop: the copies to make first, in order; the request's own copy starts where the last one ends. */
      hops?: readonly PlannedHop[];
    }>
  | Readonly<{ kind: 'unavailable'; state: SourcelessState; reason: string }>
  /** The destination cannot take the transfer now (Rucio leaves such requests for later). */
  | Readonly<{ kind: 'blocked'; reason: string }>;

/** The request has no source it can use (NO_SOURCES, ONLY_TAPE_SOURCES, MISMATCH_SCHEME): the workflows record it. */
export type RecordSourcesUnavailable = WorkflowOutput<
  'RecordSourcesUnavailable',
  { requestId: string; state: SourcelessState; reason: string }
>;

/**
 * What the preparer and the submitter do with a request no source was selected for: leave it for
 * later while its destination is blocked, or record that it has no source.
 */
export const withoutSource = (
  requestId: string,
  selection: Exclude<SourceSelection, { kind: 'selected' }>,
): Skipped | RecordSourcesUnavailable =>
  selection.kind === 'blocked'
    ? { type: 'Skipped', data: { what: requestId, reason: selection.reason } }
    : { type: 'RecordSourcesUnavailable', data: { requestId, state: selection.state, reason: selection.reason } };

/** Extra sources of a multi-source transfer (Rucio's `max_sources`). */
const MAX_EXTRA_SOURCES = 4;

/** The path of the file on an RSE: computed on deterministic ones, the stored one elsewhere. */
export const pathOn = (
  topology: Topology,
  rse: TransferRse,
  request: Pick<SelectionRequest, 'scope' | 'name'>,
  storedPath: string | null,
): string | undefined => {
  try {
    // Undefined for a name or stored path that would climb out of the RSE's prefix.
    return replicaPath(
      { deterministic: rse.properties.deterministic, lfn2pfnAlgorithm: topology.lfn2pfnAlgorithm(rse) },
      request.scope,
      request.name,
      storedPath,
    );
  } catch (error) {
    if (error instanceof RucioError) return undefined;
    throw error;
  }
};

/**
 * Where a copy goes: the deterministic path by the RSE's lfn2pfn algorithm (also on
 * non-deterministic RSEs, which Rucio names by a naming convention instead).
 */
const destinationPath = (
  topology: Topology,
  dest: TransferRse,
  request: Pick<SelectionRequest, 'scope' | 'name'>,
): string | undefined =>
  pathOn(topology, { ...dest, properties: { ...dest.properties, deterministic: true } }, request, null);

type Candidate = Readonly<{
  rse: TransferRse;
  replica: CandidateReplica;
  ranking: number;
  path: TransferPath;
}>;

/** A file stored before names were checked may climb as a path: it is copied nowhere, for good. */
const climbingName = (request: Pick<SelectionRequest, 'scope' | 'name'>): SourceSelection | undefined => {
  const climb = climbProblem('scope', request.scope) ?? climbProblem('name', request.name);
  return climb
    ? {
        kind: 'unavailable',
        state: 'NO_SOURCES',
        reason: `${request.scope}:${request.name} ${climb}: it has no path below an RSE's prefix`,
      }
    : undefined;
};

/** Why the destination cannot take transfers now, if it cannot. */
const destinationBlocked = (topology: Topology, request: SelectionRequest): string | undefined => {
  const dest = topology.rse(request.destRseId);
  if (!dest) return 'the destination RSE is deleted';
  if (!dest.properties.availability_write) return `${dest.rse} is blocked for write`;
  if (attributeFlag(dest, 'restricted_write') && !topology.isTransferAdmin(request.account))
    return `${dest.rse} is restricted for write`;
  return undefined;
};

/**
 * What every selection answers before it looks at a source (transfers and STAGEIN alike): a
 * destination that cannot take transfers, or a name no path can hold; undefined when neither.
 */
export const refusedBeforeSources = (topology: Topology, request: SelectionRequest): SourceSelection | undefined => {
  const blocked = destinationBlocked(topology, request);
  if (blocked) return { kind: 'blocked', reason: blocked };
  return climbingName(request);
};

/** Strategies 1 to 3: the replicas a request may read at all, with why the others may not. */
export const readableReplicas = (
  topology: Topology,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): { kept: { rse: TransferRse; replica: CandidateReplica }[]; dropped: string[] } => {
  const allowed = request.sourceReplicaExpression ? topology.selected(request.sourceReplicaExpression) : null;
  const dropped: string[] = [];
  const kept: { rse: TransferRse; replica: CandidateReplica }[] = [];
  for (const replica of replicas) {
    const rse = topology.rse(replica.rseId);
    if (!rse) continue;
    if (allowed && !allowed.has(rse.id)) dropped.push(`${rse.rse} (outside the source expression)`);
    else if (!rse.properties.availability_read) dropped.push(`${rse.rse} (blocked for read)`);
    else if (attributeFlag(rse, 'restricted_read') && !topology.isTransferAdmin(request.account))
      dropped.push(`${rse.rse} (restricted for read)`);
    else kept.push({ rse, replica });
  }
  return { kept, dropped };
};

/** The cost vector of a candidate (strategies 8 to 11); ties go by RSE name. */
const costOf = (candidate: Candidate): number[] => {
  const tape = isTapeOrStaging(candidate.rse) ? 1 : 0;
  return [-candidate.ranking + tape, tape, candidate.path.cost, candidate.path.hops.length > 1 ? 1 : 0];
};

const byCost = (a: Candidate, b: Candidate): number => {
  const [costA, costB] = [costOf(a), costOf(b)];
  for (let index = 0; index < costA.length; index += 1)
    if (costA[index] !== costB[index]) return costA[index]! - costB[index]!;
  return a.rse.rse < b.rse.rse ? -1 : a.rse.rse > b.rse.rse ? 1 : 0;
};

/** The ordered candidates of a request, or why there are none. */
const rankedCandidates = (
  topology: Topology,
  dest: TransferRse,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): { candidates: Candidate[] } | { state: SourcelessState; reason: string } => {
  const rankings = new Map(request.rankings.map((source) => [source.rseId, source.ranking]));
  const readable = readableReplicas(
    topology,
    request,
    replicas.filter((replica) => replica.rseId !== dest.id),
  );
  const dropped = [...readable.dropped];
  let droppedForTape = false;
  let droppedForScheme = false;
  const usable = readable.kept.filter(({ rse }) => {
    if (request.allowTapeSource || !isTapeOrStaging(rse)) return true;
    droppedForTape = true;
    dropped.push(`${rse.rse} (tape)`);
    return false;
  });
  const paths = shortestPaths(
    topology,
    usable.map(({ rse }) => rse.id),
    dest.id,
  );
  const multihop = topology.multihopRseIds().size > 0;
  const kept: Candidate[] = [];
  for (const { rse, replica } of usable) {
    const path = paths.get(rse.id);
    if (path === 'mismatch') {
      droppedForScheme = true;
      dropped.push(`${rse.rse} (no matching protocol)`);
    } else if (path === undefined) {
      dropped.push(`${rse.rse} (no ${multihop ? 'path' : 'distance'} to ${dest.rse})`);
    } else if (path.hops.slice(1).some((hop) => isTapeOrStaging(hop.source))) {
      dropped.push(`${rse.rse} (its path passes through tape)`);
    } else {
      kept.push({ rse, replica, ranking: rankings.get(rse.id) ?? 0, path });
    }
  }
  if (kept.length === 0) {
    const reason =
      replicas.length === 0 ? 'no AVAILABLE replica on another RSE' : `no usable source: ${dropped.join(', ')}`;
    if (droppedForTape) return { state: 'ONLY_TAPE_SOURCES', reason };
    if (droppedForScheme) return { state: 'MISMATCH_SCHEME', reason };
    return { state: 'NO_SOURCES', reason };
  }
  return { candidates: kept.sort(byCost) };
};

/**
 * Rucio's `__compress_multihops`: a multihop path that passes through another candidate starts
 * there (the file is already there), and of two paths from the same RSE the first is kept.
 */
const compressed = (candidates: readonly Candidate[]): Candidate[] => {
  const sourceIds = new Set(candidates.map((candidate) => candidate.rse.id));
  const seen = new Set<string>();
  const paths: Candidate[] = [];
  for (const candidate of candidates) {
    let hops = candidate.path.hops;
    let start = 0;
    for (let index = hops.length - 1; index > 0; index -= 1)
      if (sourceIds.has(hops[index]!.source.id)) {
        start = index;
        break;
      }
    hops = hops.slice(start);
    const first = hops[0]!.source;
    if (seen.has(first.id)) continue;
    seen.add(first.id);
    const from = candidates.find((other) => other.rse.id === first.id) ?? candidate;
    paths.push(start === 0 ? candidate : { ...from, path: { hops, cost: candidate.path.cost } });
  }
  return paths;
};

const submittedSource = (
  topology: Topology,
  rse: TransferRse,
  storedPath: string | null,
  ranking: number,
  protocol: RseProtocol,
  request: SelectionRequest,
): SubmittedSource | undefined => {
  const path = pathOn(topology, rse, request, storedPath);
  if (path === undefined) return undefined;
  return { rseId: rse.id, rse: rse.rse, ranking, pfn: pfnFromProtocol(protocol, path) };
};

/**
 * The copies of a path, each with its source URL (the first from the replica, the next ones from
 * where the copy before put the file), its destination URL and its tool; undefined when a path
 * cannot be named on some RSE.
 */
const copiesOf = (
  topology: Topology,
  candidate: Candidate,
  request: SelectionRequest,
): { hop: PathHop; source: SubmittedSource; destUrl: string; transfertool: string }[] | undefined => {
  const copies: { hop: PathHop; source: SubmittedSource; destUrl: string; transfertool: string }[] = [];
  for (const [index, hop] of candidate.path.hops.entries()) {
    const source =
      index === 0
        ? submittedSource(topology, hop.source, candidate.replica.path, candidate.ranking, hop.pair.source, request)
        : (() => {
            const path = destinationPath(topology, hop.source, request);
            return path === undefined
              ? undefined
              : { rseId: hop.source.id, rse: hop.source.rse, ranking: 0, pfn: pfnFromProtocol(hop.pair.source, path) };
          })();
    const destPath = destinationPath(topology, hop.dest, request);
    if (!source || destPath === undefined) return undefined;
    copies.push({
      hop,
      source,
      destUrl: pfnFromProtocol(hop.pair.dest, destPath),
      transfertool: transfertoolFor(topology, hop.dest, hop.pair),
    });
  }
  return copies;
};

/** Other directly linked disk sources whose scheme fits the main copy's destination (multi-source). */
const extraSources = (
  topology: Topology,
  dest: TransferRse,
  main: Candidate,
  candidates: readonly Candidate[],
  request: SelectionRequest,
): SubmittedSource[] => {
  const family = schemeFamily(main.path.hops[0]!.pair.dest.scheme);
  const extras = candidates
    .filter((candidate) => candidate.rse.id !== main.rse.id && !isTapeOrStaging(candidate.rse))
    .map((candidate) => ({ candidate, distance: topology.distance(candidate.rse.id, dest.id) }))
    .filter((entry): entry is { candidate: Candidate; distance: number } => entry.distance !== undefined)
    .sort(
      (a, b) =>
        b.candidate.ranking - a.candidate.ranking ||
        a.distance - b.distance ||
        (a.candidate.rse.rse < b.candidate.rse.rse ? -1 : 1),
    );
  const sources: SubmittedSource[] = [];
  for (const { candidate } of extras) {
    if (sources.length >= MAX_EXTRA_SOURCES) break;
    const pair = pairOf(topology, dest, candidate.rse, family);
    const source =
      pair && submittedSource(topology, candidate.rse, candidate.replica.path, candidate.ranking, pair.source, request);
    if (source) sources.push(source);
  }
  return sources;
};

/**
 * Chooses the sources of one request. With a preferred source (the preparer's choice) that is
 * still usable, its path comes first; otherwise every candidate is ranked. (STAGEIN requests
 * choose theirs in stageinSelection.ts.)
 */
export const selectSources = (
  topology: Topology,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): SourceSelection => {
  const refused = refusedBeforeSources(topology, request);
  if (refused) return refused;
  const dest = topology.rse(request.destRseId)!;
  const ranked = rankedCandidates(topology, dest, request, replicas);
  if ('state' in ranked) return { kind: 'unavailable', state: ranked.state, reason: ranked.reason };
  const preferred = request.preferredSourceRseId
    ? ranked.candidates.find((candidate) => candidate.rse.id === request.preferredSourceRseId)
    : undefined;
  const ordered = compressed(
    preferred ? [preferred, ...ranked.candidates.filter((candidate) => candidate !== preferred)] : ranked.candidates,
  );
  for (const main of ordered) {
    const copies = copiesOf(topology, main, request);
    if (!copies) continue;
    const own = copies[copies.length - 1]!;
    if (copies.length > 1)
      return {
        kind: 'selected',
        sources: [own.source],
        destUrl: own.destUrl,
        transfertool: own.transfertool,
        hops: copies.slice(0, -1).map(({ hop, source, destUrl, transfertool }) => ({
          destRseId: hop.dest.id,
          destRse: hop.dest.rse,
          source,
          destUrl,
          transfertool,
        })),
      };
    const sources = [
      own.source,
      ...(isTapeOrStaging(main.rse) ? [] : extraSources(topology, dest, main, ranked.candidates, request)),
    ];
    return { kind: 'selected', sources, destUrl: own.destUrl, transfertool: own.transfertool };
  }
  return {
    kind: 'unavailable',
    state: 'NO_SOURCES',
    reason: `no path for ${request.scope}:${request.name} on any source`,
  };
};
