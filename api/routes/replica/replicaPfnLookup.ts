import type { DidRef } from '../../../domain/did/did.ts';
import type { BadReplicaDocument } from '../../../projections/replica/badReplicasProjection.ts';
import type { ReadModels } from '../../../projections/runtime/readModels.ts';
import { eachListedFile, replicaListing } from '../../../projections/replica/replicaQueries.ts';

const PAGE = 500;

/**
 * `list_pfns` of the bad-replica listing: the PFNs of the listed files' replicas in any state,
 * on the named RSE only (its first PFN) or everywhere, each PFN once.
 */
export async function* replicaPfnsOf(
  readModels: ReadModels,
  rows: AsyncIterable<BadReplicaDocument>,
  rse: string | undefined,
): AsyncGenerator<string> {
  const seen = new Set<string>();
  const listPage = async function* (dids: DidRef[]): AsyncGenerator<string> {
    const files = await replicaListing(readModels, {
      dids,
      schemes: undefined,
      domain: undefined,
      clientSite: undefined,
      states: 'all',
      ignoreAvailability: true,
      rseExpression: undefined,
      updatedAfter: undefined,
      resolveParents: false,
      // A bad replica is the file's own: PFNs inside archives are not its.
      resolveArchives: false,
    });
    for await (const file of eachListedFile(files)) {
      const pfns = rse === undefined ? Object.values(file.rses).flat() : (file.rses[rse] ?? []).slice(0, 1);
      for (const pfn of pfns) {
        if (seen.has(pfn)) continue;
        seen.add(pfn);
        yield pfn;
      }
    }
  };
  let page: DidRef[] = [];
  for await (const row of rows) {
    page.push({ scope: row.scope, name: row.name });
    if (page.length === PAGE) {
      yield* listPage(page);
      page = [];
    }
  }
  if (page.length > 0) yield* listPage(page);
}
