import { priorityOf, compareProtocols, type RseProtocol } from '../rse/protocol.ts';
import type { Topology, TransferRse } from './topology.ts';

/**
 * Which protocols a copy between two RSEs uses (Rucio's `find_matching_scheme`), and which tool
 * runs it. Shared by source selection and path finding: a link between two RSEs is usable only
 * when such a pair exists.
 */

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

/** A scheme and those that copy into it: the family a multi-source transfer keeps to. */
export const schemeFamily = (scheme: string): ReadonlySet<string> =>
  new Set([scheme, ...(COMPATIBLE_SCHEMES[scheme] ?? [])]);

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

/** `matchingProtocols`, worked out once per pair of RSEs (and scheme family) in a topology. */
export const pairOf = (
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
