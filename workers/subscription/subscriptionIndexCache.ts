import { SubscriptionIndex } from '../../domain/subscription/subscriptionIndex.ts';
import {
  processedSubscriptions,
  subscriptionRecordOf,
  subscriptionsChangedAt,
} from '../../projections/subscription/subscriptionQueries.ts';
import type { ReadModels } from '../../projections/runtime/readModels.ts';

/**
 * The transmogrifier's index of subscriptions (domain/subscription/subscriptionIndex.ts), kept in
 * the worker's memory and rebuilt from the `subscriptions` read model when the position of the
 * last change to any subscription moves (one point read per job). Building it for a thousand
 * subscriptions takes milliseconds; concurrent jobs share one build.
 */
type Entry = { position: number; index: Promise<SubscriptionIndex> };

const cache = new WeakMap<ReadModels, Entry>();

export const subscriptionIndexOf = async (readModels: ReadModels): Promise<SubscriptionIndex> => {
  const position = await subscriptionsChangedAt(readModels);
  const cached = cache.get(readModels);
  if (cached && cached.position === position) return cached.index;
  const index = processedSubscriptions(readModels).then(
    (documents) =>
      new SubscriptionIndex(
        documents.map((document) => ({ record: subscriptionRecordOf(document), state: document.state })),
      ),
  );
  cache.set(readModels, { position, index });
  // A failed build is not kept: the next job tries again.
  index.catch(() => {
    if (cache.get(readModels)?.index === index) cache.delete(readModels);
  });
  return index;
};
