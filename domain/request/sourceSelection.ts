import { pfnFromProtocol, replicaPath } from '../rse/lfn2pfn.ts';
import { climbProblem } from '../shared/names.ts';
import { priorityOf, compareProtocols, type RseProtocol } from '../rse/protocol.ts';
import { RucioError } from '../shared/errors.ts';
import type { RankedSource, RequestType, SourcelessState, SubmittedSource } from './request.ts';
import { attributeFlag, isTapeOrStaging, type Topology, type TransferRse } from './topology.ts';

/**
 * Rucio's source selection (`build_transfer_paths` with its default ranking strategies,
 * behaviour rule 23), for the preparer and the submitter alike. The candidates are the file's
 * AVAILABLE replicas on other RSEs; the strategies run in Rucio's order, filters dropping
 * sources and rankers adding a cost, and the sources are ordered by their cost vectors:
 *
 *  1. the request's source replica expression;        6. a protocol pair exists (scheme match);
 *  2. `availability_read`;                             7. (multihop: not built);
 *  3. `restricted_read` unless a transfer admin;       8. cost −ranking (+1 on tape);
 *  4. (staging buffers: STAGEIN is not built);         9. cost 0 disk, 1 tape;
 *  5. tape sources when `allow_tape_source` is false; 10. cost distance; no distance drops the source.
 *
 * Nothing left: ONLY_TAPE_SOURCES if the tape filter dropped one, else MISMATCH_SCHEME if the
 * scheme filter did, else NO_SOURCES. The first source's protocol pair gives the URLs; up to four
 * more directly linked disk sources with a compatible scheme join it (multi-source transfers).
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

export type SourceSelection =
  | Readonly<{
      kind: 'selected';
      /** The main source first, then the extra sources of a multi-source transfer. */
      sources: readonly SubmittedSource[];
      destUrl: string;
      transfertool: string;
    }>
  | Readonly<{ kind: 'unavailable'; state: SourcelessState; reason: string }>
  /** The destination cannot take the transfer now (Rucio leaves such requests for later). */
  | Readonly<{ kind: 'blocked'; reason: string }>;

/** Extra sources of a multi-source transfer (Rucio's `max_sources`). */
const MAX_EXTRA_SOURCES = 4;

/** Schemes that can copy into each other (Rucio's BASE_SCHEME_MAP). */
const COMPATIBLE_SCHEMES: Readonly<Record<string, readonly string[]>> = {
  srm: ['srm', 'gsiftp'],
  gsiftp: ['srm', 'gsiftp'],
  https: ['https', 'davs', 'srm+https', 'cs3s'],
  davs: ['https', 'davs', 'srm+https', 'cs3s'],
  'srm+https': ['https', 'davs', 'srm+https', 'cs3s'],
  cs3s: ['https', 'davs', 'srm+https', 'cs3s'],
  root: ['root'],
  scp: ['scp'],
  rsync: ['rsync'],
  rclone: ['rclone'],
};

export const compatibleSchemes = (destScheme: string, sourceScheme: string): boolean =>
  destScheme === sourceScheme || (COMPATIBLE_SCHEMES[destScheme] ?? []).includes(sourceScheme);

/** Protocols serving third-party copies in one direction, preferred first (ties: listing order). */
const copyProtocols = (
  rse: TransferRse,
  operation: 'third_party_copy_read' | 'third_party_copy_write',
  schemes?: ReadonlySet<string>,
): RseProtocol[] =>
  rse.protocols
    .filter((protocol) => priorityOf(protocol, 'wan', operation) !== null && (!schemes || schemes.has(protocol.scheme)))
    .sort((a, b) => priorityOf(a, 'wan', operation)! - priorityOf(b, 'wan', operation)! || compareProtocols(a, b));

export type ProtocolPair = Readonly<{ dest: RseProtocol; source: RseProtocol }>;

/**
 * Rucio's `find_matching_scheme`: the destination's write protocols by priority, each against
 * the source's read protocols by priority; the first compatible pair wins. `schemes` narrows the
 * destination side (the main source's scheme family for extra sources).
 */
export const matchingProtocols = (
  dest: TransferRse,
  source: TransferRse,
  schemes?: ReadonlySet<string>,
): ProtocolPair | undefined => {
  const sources = copyProtocols(source, 'third_party_copy_read', schemes);
  for (const destProtocol of copyProtocols(dest, 'third_party_copy_write', schemes)) {
    const sourceProtocol = sources.find((candidate) => compatibleSchemes(destProtocol.scheme, candidate.scheme));
    if (sourceProtocol) return { dest: destProtocol, source: sourceProtocol };
  }
  return undefined;
};

/**
 * The protocol pairs worked out in a topology (a cycle), by pair of RSEs and scheme family: they
 * are the same for every request of the cycle.
 */
const pairsByTopology = new WeakMap<Topology, Map<string, ProtocolPair | undefined>>();

/** The same, worked out once per pair of RSEs (and scheme family) in a topology. */
const pairOf = (
  topology: Topology,
  dest: TransferRse,
  source: TransferRse,
  schemes?: ReadonlySet<string>,
): ProtocolPair | undefined => {
  let pairs = pairsByTopology.get(topology);
  if (!pairs) pairsByTopology.set(topology, (pairs = new Map()));
  const key = `${source.id} ${dest.id} ${schemes ? [...schemes].join(',') : '*'}`;
  if (pairs.has(key)) return pairs.get(key);
  const pair = matchingProtocols(dest, source, schemes);
  pairs.set(key, pair);
  return pair;
};

/** The path of the file on an RSE: computed on deterministic ones, the stored one elsewhere. */
const pathOn = (
  topology: Topology,
  rse: TransferRse,
  request: SelectionRequest,
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
 * The tool for a transfer to `dest`: its `transfertool` attribute (the first of a comma-separated
 * list); otherwise `posix` for a copy between `file` protocols, the configured default elsewhere.
 */
export const transfertoolFor = (topology: Topology, dest: TransferRse, pair: ProtocolPair): string => {
  const attribute = dest.attributes.transfertool;
  const named =
    typeof attribute === 'string'
      ? attribute
          .split(',')
          .map((name) => name.trim())
          .find(Boolean)
      : undefined;
  if (named) return named;
  if (pair.dest.scheme === 'file' && pair.source.scheme === 'file') return 'posix';
  return topology.facts.defaultTransfertool;
};

type Candidate = Readonly<{
  rse: TransferRse;
  replica: CandidateReplica;
  ranking: number;
  pair: ProtocolPair;
  distance: number;
}>;

/** Why the destination cannot take transfers now, if it cannot. */
export const destinationBlocked = (topology: Topology, request: SelectionRequest): string | undefined => {
  const dest = topology.rse(request.destRseId);
  if (!dest) return 'the destination RSE is deleted';
  if (!dest.properties.availability_write) return `${dest.rse} is blocked for write`;
  if (attributeFlag(dest, 'restricted_write') && !topology.isTransferAdmin(request.account))
    return `${dest.rse} is restricted for write`;
  return undefined;
};

/** The ordered candidates of a request, or why there are none. */
const rankedCandidates = (
  topology: Topology,
  dest: TransferRse,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): { candidates: Candidate[]; linked: Candidate[] } | { state: SourcelessState; reason: string } => {
  const rankings = new Map(request.rankings.map((source) => [source.rseId, source.ranking]));
  const allowed = request.sourceReplicaExpression ? topology.selected(request.sourceReplicaExpression) : null;
  let droppedForTape = false;
  let droppedForScheme = false;
  const dropped: string[] = [];
  const kept: Candidate[] = [];
  for (const replica of replicas) {
    const rse = topology.rse(replica.rseId);
    if (!rse || rse.id === dest.id) continue;
    if (allowed && !allowed.has(rse.id)) {
      dropped.push(`${rse.rse} (outside the source expression)`);
      continue;
    }
    if (!rse.properties.availability_read) {
      dropped.push(`${rse.rse} (blocked for read)`);
      continue;
    }
    if (attributeFlag(rse, 'restricted_read') && !topology.isTransferAdmin(request.account)) {
      dropped.push(`${rse.rse} (restricted for read)`);
      continue;
    }
    if (!request.allowTapeSource && isTapeOrStaging(rse)) {
      droppedForTape = true;
      dropped.push(`${rse.rse} (tape)`);
      continue;
    }
    const distance = topology.distance(rse.id, dest.id);
    const pair = pairOf(topology, dest, rse);
    if (distance !== undefined && !pair) {
      droppedForScheme = true;
      dropped.push(`${rse.rse} (no matching protocol)`);
      continue;
    }
    if (distance === undefined || !pair) {
      dropped.push(`${rse.rse} (no distance to ${dest.rse})`);
      continue;
    }
    kept.push({ rse, replica, ranking: rankings.get(rse.id) ?? 0, pair, distance });
  }
  if (kept.length === 0) {
    const reason =
      replicas.length === 0 ? 'no AVAILABLE replica on another RSE' : `no usable source: ${dropped.join(', ')}`;
    if (droppedForTape) return { state: 'ONLY_TAPE_SOURCES', reason };
    if (droppedForScheme) return { state: 'MISMATCH_SCHEME', reason };
    return { state: 'NO_SOURCES', reason };
  }
  const cost = (candidate: Candidate): number[] => {
    const tape = isTapeOrStaging(candidate.rse) ? 1 : 0;
    return [-candidate.ranking + tape, tape, candidate.distance, 0];
  };
  const compare = (a: Candidate, b: Candidate): number => {
    const [costA, costB] = [cost(a), cost(b)];
    for (let index = 0; index < costA.length; index += 1)
      if (costA[index] !== costB[index]) return costA[index]! - costB[index]!;
    return a.rse.rse < b.rse.rse ? -1 : a.rse.rse > b.rse.rse ? 1 : 0;
  };
  return { candidates: kept.sort(compare), linked: kept };
};

/**
 * Where the copy goes: the deterministic path by the destination's lfn2pfn algorithm (also on
 * non-deterministic destinations, which Rucio names by a naming convention instead).
 */
const destinationPath = (topology: Topology, dest: TransferRse, request: SelectionRequest): string | undefined =>
  pathOn(topology, { ...dest, properties: { ...dest.properties, deterministic: true } }, request, null);

const submittedSource = (
  topology: Topology,
  candidate: Candidate,
  protocol: RseProtocol,
  request: SelectionRequest,
): SubmittedSource | undefined => {
  const path = pathOn(topology, candidate.rse, request, candidate.replica.path);
  if (path === undefined) return undefined;
  return {
    rseId: candidate.rse.id,
    rse: candidate.rse.rse,
    ranking: candidate.ranking,
    pfn: pfnFromProtocol(protocol, path),
  };
};

/**
 * Chooses the sources of one request. With a preferred source (the preparer's choice) that is
 * still usable, it is the main source; otherwise every candidate is ranked.
 */
export const selectSources = (
  topology: Topology,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): SourceSelection => {
  const blocked = destinationBlocked(topology, request);
  if (blocked) return { kind: 'blocked', reason: blocked };
  // A file stored before names were checked may climb as a path: it is copied nowhere, for good.
  const climb = climbProblem('scope', request.scope) ?? climbProblem('name', request.name);
  if (climb)
    return {
      kind: 'unavailable',
      state: 'NO_SOURCES',
      reason: `${request.scope}:${request.name} ${climb}: it has no path below an RSE's prefix`,
    };
  const dest = topology.rse(request.destRseId)!;
  const ranked = rankedCandidates(topology, dest, request, replicas);
  if ('state' in ranked) return { kind: 'unavailable', state: ranked.state, reason: ranked.reason };
  const preferred = request.preferredSourceRseId
    ? ranked.candidates.find((candidate) => candidate.rse.id === request.preferredSourceRseId)
    : undefined;
  const ordered = preferred
    ? [preferred, ...ranked.candidates.filter((candidate) => candidate !== preferred)]
    : ranked.candidates;
  for (const main of ordered) {
    const destPath = destinationPath(topology, dest, request);
    const first = submittedSource(topology, main, main.pair.source, request);
    if (destPath === undefined || !first) continue;
    const sources: SubmittedSource[] = [first];
    if (!isTapeOrStaging(main.rse)) {
      // Multi-source: other directly linked disk sources whose scheme fits the destination's.
      const family = new Set([main.pair.dest.scheme, ...(COMPATIBLE_SCHEMES[main.pair.dest.scheme] ?? [])]);
      const extras = ranked.linked
        .filter((candidate) => candidate !== main && !isTapeOrStaging(candidate.rse))
        .sort((a, b) => b.ranking - a.ranking || a.distance - b.distance || (a.rse.rse < b.rse.rse ? -1 : 1));
      for (const extra of extras) {
        if (sources.length > MAX_EXTRA_SOURCES) break; // the main source and four more
        const pair = pairOf(topology, dest, extra.rse, family);
        const source = pair && submittedSource(topology, extra, pair.source, request);
        if (source) sources.push(source);
      }
    }
    return {
      kind: 'selected',
      sources,
      destUrl: pfnFromProtocol(main.pair.dest, destPath),
      transfertool: transfertoolFor(topology, dest, main.pair),
    };
  }
  return {
    kind: 'unavailable',
    state: 'NO_SOURCES',
    reason: `no path for ${request.scope}:${request.name} on any source`,
  };
};
