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
  /**
   * Multihop (Rucio's `configure_multihop`): the RSEs a transfer may pass through, as an RSE
   * expression (`transfers.multihop_rse_expression`, default `available_for_multihop=true`; empty:
   * no multihop), the cost each intermediate RSE adds (`transfers.hop_penalty`, an RSE's own
   * `hop_penalty` attribute first), and at most how many copies a path may take
   * (`transfers.multihop_max_hops`; null: no bound, as in Rucio). Absent: no multihop.
   */
  multihop?: MultihopSettings;
}>;

export type MultihopSettings = Readonly<{
  rseExpression: string;
  hopPenalty: number;
  maxHops: number | null;
  /** Seconds an intermediate replica is kept (`transfers.multihop_tombstone_delay`; an RSE's own attribute first). */
  tombstoneDelay: number;
}>;

/** Rucio's `DEFAULT_MULTIHOP_TOMBSTONE_DELAY`: two hours. */
export const DEFAULT_MULTIHOP_TOMBSTONE_DELAY = 7200;

/** Rucio's `DEFAULT_HOP_PENALTY`. */
export const DEFAULT_HOP_PENALTY = 10;

export class Topology {
  private readonly byId: ReadonlyMap<string, TransferRse>;
  private readonly expressions = new Map<string, ReadonlySet<string>>();
  private multihopIds: ReadonlySet<string> | undefined;
  private inbound: ReadonlyMap<string, readonly (readonly [string, number])[]> | undefined;

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

  /** The links that end at an RSE, as `[source id, distance]`, in the order of the source's name. */
  linksInto(destRseId: string): readonly (readonly [string, number])[] {
    if (!this.inbound) {
      const inbound = new Map<string, [string, number][]>();
      for (const [sourceId, row] of this.facts.distances) {
        for (const [destId, distance] of row) {
          if (distance === null || !this.byId.has(sourceId) || !this.byId.has(destId)) continue;
          inbound.set(destId, [...(inbound.get(destId) ?? []), [sourceId, Math.max(0, distance)]]);
        }
      }
      for (const links of inbound.values())
        links.sort(([a], [b]) => (this.byId.get(a)!.rse < this.byId.get(b)!.rse ? -1 : 1));
      this.inbound = inbound;
    }
    return this.inbound.get(destRseId) ?? [];
  }

  /** Whether any link starts at the RSE. */
  hasLinksFrom(sourceRseId: string): boolean {
    for (const distance of this.facts.distances.get(sourceRseId)?.values() ?? []) if (distance !== null) return true;
    return false;
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

  /**
   * The RSEs a multihop path may pass through: those the expression selects that can be read and
   * written (Rucio's `used_for_multihop`). Empty: multihop is off, and paths are direct.
   */
  multihopRseIds(): ReadonlySet<string> {
    if (!this.multihopIds) {
      const expression = this.facts.multihop?.rseExpression.trim() ?? '';
      const selected = expression === '' ? new Set<string>() : this.selected(expression);
      this.multihopIds = new Set(
        [...selected].filter((id) => {
          const rse = this.byId.get(id);
          return rse !== undefined && rse.properties.availability_read && rse.properties.availability_write;
        }),
      );
    }
    return this.multihopIds;
  }

  /** What passing through an RSE costs: its `hop_penalty` attribute, else the configured penalty. */
  hopPenalty(rse: TransferRse): number {
    const fallback = this.facts.multihop?.hopPenalty ?? DEFAULT_HOP_PENALTY;
    const attribute = rse.attributes.hop_penalty;
    if (attribute === undefined || typeof attribute === 'boolean') return fallback;
    const parsed = Number(attribute);
    return Number.isInteger(parsed) ? parsed : fallback;
  }

  maxHops(): number | null {
    return this.facts.multihop?.maxHops ?? null;
  }

  /** How long an intermediate replica on the RSE is kept: its `multihop_tombstone_delay`, else the configured one. */
  multihopTombstoneDelay(rse: TransferRse): number | string {
    const attribute = rse.attributes.multihop_tombstone_delay;
    return typeof attribute === 'string' && attribute.trim() !== ''
      ? attribute
      : (this.facts.multihop?.tombstoneDelay ?? DEFAULT_MULTIHOP_TOMBSTONE_DELAY);
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

/** A tape RSE (Rucio's `is_tape`). */
export const isTape = (rse: TransferRse): boolean => rse.properties.rse_type === 'TAPE';

/** Tape, or an RSE whose files must be staged first (Rucio's `is_tape_or_staging_required`). */
export const isTapeOrStaging = (rse: TransferRse): boolean => isTape(rse) || attributeFlag(rse, 'staging_required');
