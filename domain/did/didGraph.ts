import type { ChildFacts } from './didContent.ts';
import type { ContentTotals, DidRef } from './did.ts';

/**
 * A port: facts about the DID graph that no single stream holds (who contains a DID, what lies
 * below a container), which the command layer reads before deciding. Declared here, beside the
 * decisions that need them; answered from the content read model
 * (projections/did/readModelDidGraph.ts), which read your writes keeps current for the caller's
 * own changes.
 */
export interface DidGraph {
  /** Direct parents of a DID. */
  parents(scope: string, name: string): Promise<DidRef[]>;
  /** Direct parents of each DID, by `scope:name` (DIDs without parents are left out), in a few batched queries. */
  parentsOfMany(dids: readonly DidRef[]): Promise<Map<string, DidRef[]>>;
  /** `scope:name` of every ancestor: parents, their parents, and so on. */
  ancestors(scope: string, name: string): Promise<ReadonlySet<string>>;
  /** Summed totals of the distinct datasets below a container (what closing it records). */
  descendantDatasetTotals(scope: string, name: string): Promise<ContentTotals>;
  /**
   * The catalogue facts of the given DIDs that the read model holds, by `scope:name`, in a few
   * batched queries. A DID missing here may still be too new to be projected.
   */
  catalogued(dids: readonly DidRef[]): Promise<Map<string, ChildFacts>>;
  /** Every file below a DID, depth first (a file itself for a file). */
  files(scope: string, name: string): AsyncIterable<DidRef>;
}
