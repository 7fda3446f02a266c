import { DEFAULT_LFN2PFN_ALGORITHM } from '../rse/lfn2pfn.ts';
import type { RseProtocol } from '../rse/protocol.ts';
import { evaluateRseExpression, type RseFacts } from '../rse/rseExpression.ts';
import { RucioError } from '../shared/errors.ts';

/**
 * What the conveyor knows of the storage elements in one cycle (Rucio's `Topology`): every RSE
 * that is not deleted with its protocols, the distances between them, and who may read restricted
 * RSEs. Built once per cycle from the read models and handed to the pure workflows; expressions
 * are evaluated once each.
 */

export type TransferRse = RseFacts & Readonly<{ protocols: readonly RseProtocol[] }>;

export type TopologyFacts = Readonly<{
  rses: readonly TransferRse[];
  /** Directed distances: source id → destination id → distance (null: the row says no link). */
  distances: ReadonlyMap<string, ReadonlyMap<string, number | null>>;
  /** Accounts that may read `restricted_read` RSEs and write `restricted_write` ones (root and admins). */
  transferAdmins: ReadonlySet<string>;
  /** The lfn2pfn algorithm of RSEs without an `lfn2pfn_algorithm` attribute. */
  lfn2pfnDefault: string;
  /** The tool of RSEs without a `transfertool` attribute whose copy is not between `file` protocols. */
  defaultTransfertool: string;
}>;

export class Topology {
  private readonly byId: ReadonlyMap<string, TransferRse>;
  private readonly expressions = new Map<string, ReadonlySet<string>>();

  constructor(readonly facts: TopologyFacts) {
    this.byId = new Map(facts.rses.map((rse) => [rse.id, rse]));
  }

  rse(rseId: string): TransferRse | undefined {
    return this.byId.get(rseId);
  }

  /** The distance from one RSE to another; undefined when there is no link (no row, or a null one). */
  distance(sourceRseId: string, destRseId: string): number | undefined {
    const distance = this.facts.distances.get(sourceRseId)?.get(destRseId);
    return distance === null || distance === undefined ? undefined : Math.max(0, distance);
  }

  /** The ids an expression selects; an invalid expression (or one selecting nothing) selects none. */
  selected(expression: string): ReadonlySet<string> {
    let ids = this.expressions.get(expression);
    if (!ids) {
      try {
        ids = new Set(evaluateRseExpression(expression, this.facts.rses).map((rse) => rse.id));
      } catch (error) {
        if (!(error instanceof RucioError)) throw error;
        ids = new Set();
      }
      this.expressions.set(expression, ids);
    }
    return ids;
  }

  isTransferAdmin(account: string): boolean {
    return this.facts.transferAdmins.has(account);
  }

  lfn2pfnAlgorithm(rse: TransferRse): string {
    const attribute = rse.attributes.lfn2pfn_algorithm;
    return typeof attribute === 'string' && attribute !== ''
      ? attribute
      : this.facts.lfn2pfnDefault || DEFAULT_LFN2PFN_ALGORITHM;
  }
}

/** Attribute values are text or booleans; Rucio reads flags as truthy text too. */
export const attributeFlag = (rse: TransferRse, key: string): boolean => {
  const value = rse.attributes[key];
  return value === true || (typeof value === 'string' && ['true', '1', 'yes'].includes(value.toLowerCase()));
};

/** Tape, or an RSE whose files must be staged first (Rucio's `is_tape_or_staging_required`). */
export const isTapeOrStaging = (rse: TransferRse): boolean =>
  rse.properties.rse_type === 'TAPE' || attributeFlag(rse, 'staging_required');
