import type { DidRef } from '../../domain/did/did.ts';
import { pfnsToRses } from '../../domain/replica/pfnRses.ts';
import { didCandidatesOfPath, parsePfn, schemeOf, storedPathOf } from '../../domain/replica/pfns.ts';
import { selectProtocol } from '../../domain/rse/protocolSelection.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { CatalogueRse, ReplicaCatalogue } from '../../domain/replica/replicaCatalogue.ts';

/** One PFN and the file it names on its RSE; `did` is undefined when no registered replica matches. */
export type ResolvedPfn = Readonly<{ pfn: string; did: DidRef | undefined }>;

/**
 * The DID behind a PFN on a known RSE. The PFN is taken apart with the RSE's read protocol of its
 * scheme. Non-deterministic RSEs look the stored path up; deterministic ones reverse their
 * lfn2pfn algorithm and keep the candidate that has a replica there. With `guess`, a
 * deterministic PFN without such a replica still names its first candidate, or Rucio's reading
 * (first directory as scope, last component as name): that is what `get_did_from_pfns` answers.
 */
export const resolvePfnOnRse = async (
  catalogue: ReplicaCatalogue,
  rse: CatalogueRse,
  pfn: string,
  options: { guess: boolean },
): Promise<DidRef | undefined> => {
  let parsed;
  try {
    parsed = parsePfn(selectProtocol(rse.protocols, { operation: 'read', domain: 'wan', scheme: schemeOf(pfn) }), pfn);
  } catch (error) {
    if (error instanceof RucioError) return undefined;
    throw error;
  }
  const path = storedPathOf(parsed);
  if (!rse.deterministic) {
    return (await catalogue.fileAtPath(rse.id, path)) ?? (await catalogue.fileAtPath(rse.id, path.replace(/^\//, '')));
  }
  const candidates = didCandidatesOfPath(path, rse.lfn2pfnAlgorithm);
  for (const candidate of candidates) if (await catalogue.hasReplica(candidate, rse.id)) return candidate;
  if (!options.guess) return undefined;
  return candidates[0] ?? { scope: parsed.path.replace(/^\/+/, '').split('/')[0]!, name: parsed.name };
};

export type PfnResolution = Readonly<{
  /** Per RSE id: the RSE and its PFNs with their files. */
  byRse: ReadonlyMap<string, { rse: CatalogueRse; pfns: ResolvedPfn[] }>;
  /** PFNs no RSE serves. */
  unknown: readonly string[];
}>;

/** Maps PFNs to their RSEs (all of one scheme), then each to its file (Rucio's declare path). */
export const resolvePfns = async (catalogue: ReplicaCatalogue, pfns: readonly string[]): Promise<PfnResolution> => {
  const rses = await catalogue.rses();
  const mapped = pfnsToRses(pfns, rses);
  const byId = new Map(rses.map((rse) => [rse.id, rse]));
  const byRse = new Map<string, { rse: CatalogueRse; pfns: ResolvedPfn[] }>();
  for (const [rseId, rsePfns] of mapped.byRse) {
    const rse = byId.get(rseId)!;
    const resolved: ResolvedPfn[] = [];
    for (const pfn of rsePfns)
      resolved.push({ pfn, did: await resolvePfnOnRse(catalogue, rse, pfn, { guess: false }) });
    byRse.set(rseId, { rse, pfns: resolved });
  }
  return { byRse, unknown: mapped.unknown };
};
