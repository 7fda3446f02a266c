import { ruleStreamName, type Rule } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type { HistoryBound } from './auditQueries.ts';
import { boundOf, foldUpTo } from './didStateAsOf.ts';

export type RuleStateAsOf = Readonly<{
  rule: Rule;
  /** The newest event of the rule's stream folded; undefined when none was. */
  lastEvent: RecordedEvent | undefined;
  /** Whether the rule's stream holds any event at all (at any time). */
  exists: boolean;
}>;

/**
 * A rule as it was at a past position or time, folded from its own stream by the decider the
 * service runs, bounded as a DID's past state is (didStateAsOf.ts): its options, state and lock
 * counters then.
 */
export const ruleStateAsOf = async (
  eventStore: EventStore,
  upcasters: Upcasters,
  ruleId: string,
  asOf: HistoryBound | undefined,
): Promise<RuleStateAsOf> => {
  const within = await boundOf(eventStore, asOf);
  const events = await eventStore.readStream(ruleStreamName(ruleId));
  const folded = foldUpTo(ruleDecider, events, within, upcasters);
  return { rule: folded.state, lastEvent: folded.last, exists: events.length > 0 };
};
