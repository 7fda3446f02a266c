import type { DidRef } from '../did/did.ts';
import type { ReplicaState } from '../replica/replica.ts';
import type { RseFacts } from '../rse/rseExpression.ts';

/**
 * A port, declared beside the decisions that need it: facts about rules that no single stream holds: the RSEs expressions are evaluated over, the
 * owner's usage, the RSEs' space, where files have replicas, which datasets a container holds.
 * They come from the read models (projections/rule/readModelRuleFacts.ts); like Rucio's, quota
 * and usage are eventually consistent, while the locks themselves are decided on the streams.
 */
export interface RuleFacts {
  /** Every RSE that is not deleted. */
  rses(): Promise<RseFacts[]>;
  /** Bytes of the account's locks by RSE id. */
  accountUsage(account: string): Promise<Record<string, number>>;
  /** Each RSE's `MaxSpaceAvailable` limit (null: none) and the bytes its catalogue counter holds. */
  rseSpace(): Promise<Record<string, { maxSpace: number | null; used: number }>>;
  /** The replicas of each file by RSE id, keyed `scope:name`; files without replicas are missing. */
  replicasOf(files: readonly DidRef[]): Promise<Map<string, Record<string, { state: ReplicaState }>>>;
  /** The distinct datasets below a container, in name order. */
  datasetsBelow(container: DidRef): Promise<DidRef[]>;
}
