import type { DidType } from '../did/did.ts';
import { RucioError } from '../shared/errors.ts';
import { isProcessed, type SubscriptionRecord, type SubscriptionState } from './subscription.ts';
import { compileFilter, type CompiledFilter } from './subscriptionFilter.ts';

/**
 * The subscriptions a new DID could match, found without trying them all: each subscription the
 * transmogrifier processes is filed under the literal prefix of each of its scope expressions
 * (what every scope it matches starts with: `mc16_.*` under `mc16_`, `data` under `data`) and
 * under the DID types it names. A DID's candidates are those filed under a prefix of its scope
 * (at most 26 look-ups, one per prefix length, the empty prefix holding the subscriptions without
 * a scope condition or with an expression that starts with no literal) for its type or for any
 * type. Only the candidates' filters are then tried. Built from the read model by the worker and
 * rebuilt when a subscription changes (workers/subscription/subscriptionIndexCache.ts).
 */

export type IndexedSubscription = Readonly<{
  record: SubscriptionRecord;
  state: SubscriptionState;
  filter: CompiledFilter;
}>;

type ByType = Map<DidType | '*', IndexedSubscription[]>;

/** Processing order: priority first (0 is the highest), then id, so that every worker agrees. */
const byPriority = (a: IndexedSubscription, b: IndexedSubscription): number =>
  a.record.priority - b.record.priority || (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0);

/** A subscription with its filter compiled; undefined when the stored filter no longer compiles. */
export const indexedSubscription = (
  record: SubscriptionRecord,
  state: SubscriptionState,
): IndexedSubscription | undefined => {
  try {
    return { record, state, filter: compileFilter(record.filter) };
  } catch (error) {
    if (error instanceof RucioError) return undefined;
    throw error;
  }
};

export class SubscriptionIndex {
  private readonly byPrefix = new Map<string, ByType>();
  private readonly count: number;

  /** Indexes the subscriptions the transmogrifier processes (ACTIVE, UPDATED, NEW); a filter that no longer compiles is left out. */
  constructor(subscriptions: Iterable<Readonly<{ record: SubscriptionRecord; state: SubscriptionState }>>) {
    let count = 0;
    for (const { record, state } of subscriptions) {
      if (!isProcessed(state)) continue;
      const indexed = indexedSubscription(record, state);
      if (!indexed) continue;
      count += 1;
      const { filter } = indexed;
      for (const prefix of new Set(filter.scopePrefixes ?? [''])) {
        const byType = this.byPrefix.get(prefix) ?? new Map();
        for (const didType of filter.didTypes ?? ['*' as const]) {
          const bucket = byType.get(didType);
          if (bucket) bucket.push(indexed);
          else byType.set(didType, [indexed]);
        }
        this.byPrefix.set(prefix, byType);
      }
    }
    this.count = count;
  }

  /** How many subscriptions are indexed. */
  get size(): number {
    return this.count;
  }

  /** The subscriptions whose scope and type conditions may let a DID of this scope and type through, by priority. */
  candidates(scope: string, didType: DidType): IndexedSubscription[] {
    const found = new Map<string, IndexedSubscription>();
    for (let length = 0; length <= scope.length; length += 1) {
      const byType = this.byPrefix.get(scope.slice(0, length));
      if (!byType) continue;
      for (const subscription of [...(byType.get(didType) ?? []), ...(byType.get('*') ?? [])])
        found.set(subscription.record.id, subscription);
    }
    return [...found.values()].sort(byPriority);
  }
}
