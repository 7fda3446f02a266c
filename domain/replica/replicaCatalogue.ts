import type { DidRef } from '../did/did.ts';
import type { PfnRse } from './pfnRses.ts';

/** What resolving PFNs needs to know of an RSE. */
export type CatalogueRse = PfnRse &
  Readonly<{
    deterministic: boolean;
    lfn2pfnAlgorithm: string;
  }>;

/**
 * A port, declared beside the decisions that need it: facts about replicas that no single stream
 * holds (which RSE a PFN belongs to, which file a non-deterministic path stores, where a DID has
 * replicas). Answered from the read models (projections/replica/readModelReplicaCatalogue.ts);
 * read your writes keeps them current for the caller's own changes.
 */
export interface ReplicaCatalogue {
  /** Every RSE that is not deleted, with its protocols. */
  rses(): Promise<CatalogueRse[]>;
  /** The RSE with this id, if it exists and is not deleted. */
  rseById(rseId: string): Promise<CatalogueRse | undefined>;
  /** The file whose replica on the RSE is stored at `path` (non-deterministic RSEs). */
  fileAtPath(rseId: string, path: string): Promise<DidRef | undefined>;
  /** Whether the file has a replica on the RSE. */
  hasReplica(did: DidRef, rseId: string): Promise<boolean>;
  /** Bytes of all replicas the catalogue counts on the RSE (its `rucio` usage). */
  catalogueBytes(rseId: string): Promise<number>;
}
