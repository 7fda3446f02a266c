import { transfertoolFor } from './protocolPairs.ts';
import { isTapeOrStaging, type Topology } from './topology.ts';
import { shortestPaths } from './transferPaths.ts';
import { copyTokenGrants, type CopyTokenGrants } from './transferTokens.ts';

/**
 * The path the conveyor would take from one RSE to another, copy by copy, for operators (`dms
 * transfers path`): the RSEs, the link's distance, the protocols, the tool, whether the source
 * is brought online first, and the token grants when the copy uses tokens. The same pure parts
 * as the submitter's: transferPaths.ts, protocolPairs.ts, transferTokens.ts.
 */

export type PlannedCopy = Readonly<{
  source: string;
  dest: string;
  distance: number;
  sourceScheme: string;
  destScheme: string;
  transfertool: string;
  /** The source is on tape (or needs staging): the tool brings it online first. */
  staged: boolean;
  tokens: CopyTokenGrants | null;
}>;

export type PathReport =
  Readonly<{ kind: 'path'; cost: number; copies: readonly PlannedCopy[] }> | Readonly<{ kind: 'none'; reason: string }>;

export const pathReport = (topology: Topology, sourceRseId: string, destRseId: string): PathReport => {
  const source = topology.rse(sourceRseId);
  const dest = topology.rse(destRseId);
  if (!source || !dest) return { kind: 'none', reason: 'an RSE is unknown or deleted' };
  const found = shortestPaths(topology, [sourceRseId], destRseId).get(sourceRseId);
  if (found === 'mismatch')
    return { kind: 'none', reason: `${source.rse} has links, but no protocol in common along any of them` };
  if (!found) {
    const multihop = topology.multihopRseIds().size > 0;
    return {
      kind: 'none',
      reason: multihop
        ? `no path from ${source.rse} to ${dest.rse}, even through the multihop RSEs`
        : `no distance from ${source.rse} to ${dest.rse}, and no RSE is marked for multihop`,
    };
  }
  return {
    kind: 'path',
    cost: found.cost,
    copies: found.hops.map((hop) => ({
      source: hop.source.rse,
      dest: hop.dest.rse,
      distance: hop.distance,
      sourceScheme: hop.pair.source.scheme,
      destScheme: hop.pair.dest.scheme,
      transfertool: transfertoolFor(topology, hop.dest, hop.pair),
      staged: isTapeOrStaging(hop.source),
      tokens: copyTokenGrants(topology, [{ rseId: hop.source.id, pfn: `${hop.pair.source.scheme}://` }], {
        rseId: hop.dest.id,
        pfn: `${hop.pair.dest.scheme}://`,
      }),
    })),
  };
};
