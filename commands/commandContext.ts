import type { EventStore } from '../infra/eventstore/eventStore.ts';
import type { DidGraph } from '../domain/did/didGraph.ts';
import type { ReplicaCatalogue } from '../domain/replica/replicaCatalogue.ts';
import type { RuleFacts } from '../domain/rule/ruleFacts.ts';
import type { Upcasters } from '../domain/shared/upcasting.ts';
import { eventUpcasters } from '../domain/areas.ts';
import { StateCache } from './stateCache.ts';

/**
 * What every command module works with: the event store, the cache of recent aggregate states,
 * and the ports for the facts no single stream holds (answered from the read models). Built once
 * per process (bin/runtime.ts) and handed to the API and the workers alike.
 */
export type CommandContext = Readonly<{
  eventStore: EventStore;
  stateCache: StateCache;
  didGraph: DidGraph;
  replicaCatalogue: ReplicaCatalogue;
  ruleFacts: RuleFacts;
  /** Bring stored events to their current shape when read, and give new ones their schema version. */
  upcasters: Upcasters;
}>;

export const createCommandContext = (
  ports: Readonly<{
    eventStore: EventStore;
    didGraph: DidGraph;
    replicaCatalogue: ReplicaCatalogue;
    ruleFacts: RuleFacts;
    upcasters?: Upcasters;
  }>,
  /** States kept in memory, least recently used dropped first; default 10 000. */
  cacheEntries = 10_000,
): CommandContext => ({
  ...ports,
  upcasters: ports.upcasters ?? eventUpcasters,
  stateCache: new StateCache(cacheEntries),
});
