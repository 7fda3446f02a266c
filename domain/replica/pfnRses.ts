import type { RseProtocol } from '../rse/protocol.ts';
import { InvalidPath, InvalidType } from '../shared/errors.ts';
import { cleanPfn, schemeOf } from './pfns.ts';

/** What mapping PFNs to RSEs needs to know of an RSE. */
export type PfnRse = Readonly<{ id: string; rse: string; stagingArea: boolean; protocols: readonly RseProtocol[] }>;

export type PfnsByRse = Readonly<{
  scheme: string | undefined;
  /** Cleaned PFNs by the id of the RSE whose protocol they start with, in request order. */
  byRse: ReadonlyMap<string, string[]>;
  /** Cleaned PFNs no RSE serves. */
  unknown: readonly string[];
}>;

/**
 * Rucio's `get_pfn_to_rse`: every PFN must use the same scheme (InvalidType); a PFN belongs to the
 * RSE (not a staging area) one of whose protocols of that scheme it starts with, written
 * `scheme://host:port<prefix>` or `scheme://host<prefix>`. A PFN two RSEs could serve is refused
 * (InvalidPath) rather than guessed; Rucio answers that with a bare RucioException.
 */
export const pfnsToRses = (pfns: readonly string[], rses: readonly PfnRse[]): PfnsByRse => {
  const cleaned = [...new Set(pfns.map(cleanPfn))];
  const scheme = cleaned.length > 0 ? schemeOf(cleaned[0]!) : undefined;
  if (cleaned.some((pfn) => schemeOf(pfn) !== scheme))
    throw new InvalidType('The PFNs specified must have the same protocol');
  const patterns = rses
    .filter((rse) => !rse.stagingArea)
    .map((rse) => ({
      rse,
      starts: rse.protocols
        .filter((protocol) => protocol.scheme === scheme)
        .flatMap((protocol) => [
          `${protocol.scheme}://${protocol.hostname}:${protocol.port}${protocol.prefix ?? ''}`,
          `${protocol.scheme}://${protocol.hostname}${protocol.prefix ?? ''}`,
        ]),
    }))
    .filter((entry) => entry.starts.length > 0);
  const byRse = new Map<string, string[]>();
  const unknown: string[] = [];
  for (const pfn of cleaned) {
    const matching = patterns.filter((entry) => entry.starts.some((start) => pfn.startsWith(start)));
    if (matching.length > 1) {
      throw new InvalidPath(
        `The PFN ${pfn} matches several RSEs: ${matching.map((entry) => entry.rse.rse).join(', ')}`,
      );
    }
    const [match] = matching;
    if (!match) {
      unknown.push(pfn);
      continue;
    }
    const list = byRse.get(match.rse.id);
    if (list) list.push(pfn);
    else byRse.set(match.rse.id, [pfn]);
  }
  return { scheme, byRse, unknown };
};
