/**
 * What the kill matrix's writers were told was done (an acknowledged write: 200 or 201), by kind,
 * with the round it was acknowledged in. A write that got no answer (the kill cut it) is not here,
 * even if it was done; the checks read what the service shows for those.
 */

export type WriteKind = 'account' | 'dataset' | 'replicas' | 'attach' | 'metadata' | 'rule';

/** A file the matrix wrote on the source RSE's disk and registered. */
export type FileEntry = Readonly<{ name: string; path: string; bytes: number; adler32: string }>;

export type Acked =
  | Readonly<{ kind: 'account'; round: number; account: string }>
  | Readonly<{ kind: 'dataset'; round: number; dataset: string }>
  | Readonly<{ kind: 'replicas'; round: number; files: readonly string[] }>
  | Readonly<{ kind: 'attach'; round: number; dataset: string; files: readonly string[] }>
  | Readonly<{ kind: 'metadata'; round: number; did: string; key: string; value: string }>
  | Readonly<{ kind: 'rule'; round: number; ruleId: string; did: string }>;

export class Ledger {
  readonly acked: Acked[] = [];
  /** Every file written to the source disk, by name (registered or not: the kill may have cut the call). */
  readonly files = new Map<string, FileEntry>();
  /** Files whose registration was acknowledged, not yet handed to an attach. */
  readonly registered: string[] = [];
  /** Datasets whose creation was acknowledged. */
  readonly datasets: string[] = [];
  /** Acknowledged datasets without a rule of the matrix (subscription datasets get theirs from it). */
  readonly unruledDatasets: string[] = [];
  /** Files acknowledged registered that have no rule of their own yet. */
  readonly unruledFiles: string[] = [];
  private counter = 0;

  /** A name never used before in this run. */
  next(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }

  record(write: Acked): void {
    this.acked.push(write);
  }

  ofRound(round: number): Acked[] {
    return this.acked.filter((write) => write.round === round);
  }

  /** Acknowledged writes per kind, in rounds up to `round` (all when absent). */
  counts(round?: number): Record<WriteKind, number> {
    const counts: Record<WriteKind, number> = { account: 0, dataset: 0, replicas: 0, attach: 0, metadata: 0, rule: 0 };
    for (const write of this.acked) if (round === undefined || write.round === round) counts[write.kind] += 1;
    return counts;
  }

  ruleIds(): string[] {
    return this.acked.flatMap((write) => (write.kind === 'rule' ? [write.ruleId] : []));
  }
}

/** One random element, or undefined from an empty list. */
export const pick = <T>(items: readonly T[]): T | undefined =>
  items.length === 0 ? undefined : items[Math.floor(Math.random() * items.length)];

/** Takes one random element out of the list. */
export const take = <T>(items: T[]): T | undefined =>
  items.length === 0 ? undefined : items.splice(Math.floor(Math.random() * items.length), 1)[0];
