import type { AppendPath, AppendsOption } from './esdbAppendPath.ts';
import { EsdbEventStore } from './esdbEventStore.ts';
import type { EventStore } from './eventStore.ts';
import { SteppedEventStore, type SteppedEventStoreOptions } from './steppedEventStore.ts';

export type EsdbOpenOptions = Readonly<{
  /** `auto` (default): atomic multi-stream appends where the server offers them; `stepped`: never. */
  appends?: AppendsOption;
  /** The stepped protocol's settings (its Redis is required on both paths, see `storeForPath`). */
  steps: SteppedEventStoreOptions;
}>;

/**
 * Opens the EventStoreDB / KurrentDB store the service writes through: the server is asked what
 * it offers, and multi-stream decisions go the way it allows (esdbAppendPath.ts), said once in
 * the log.
 */
export const openEsdbEventStore = async (connectionString: string, options: EsdbOpenOptions): Promise<EventStore> => {
  const { store, path } = await EsdbEventStore.connect(connectionString, options.appends ?? 'auto');
  options.steps.logger?.info({ appends: path.kind, reason: path.reason }, 'event store: multi-stream appends');
  try {
    return await storeForPath(store, path, options.steps);
  } catch (error) {
    await store.close();
    throw error;
  }
};

/**
 * The store to write through on a path: on the stepped path SteppedEventStore over `inner`
 * (which completes the steps earlier writers left, then sweeps); on the atomic path `inner`
 * itself, once the steps of the stepped protocol left unfinished in `steps-journal` (a
 * deployment that ran on the server before it offered atomic appends) are completed. A step still
 * held by a live writer of the stepped protocol stops the start: writers of both paths must never
 * run together, since atomic appends take no leases and could slip into such a step.
 */
export const storeForPath = async (
  inner: EventStore,
  path: AppendPath,
  steps: SteppedEventStoreOptions,
): Promise<EventStore> => {
  if (path.kind === 'stepped') return SteppedEventStore.open(inner, steps);
  const { finished, unfinished } = await SteppedEventStore.finishLeftSteps(inner, steps);
  if (finished > 0)
    steps.logger?.info({ finished }, 'completed steps that writers of the stepped protocol left unfinished');
  if (unfinished > 0)
    throw new Error(
      `${unfinished} multi-stream steps are held by writers of the stepped protocol that are still running, ` +
        'while this server takes atomic multi-stream appends: stop every process of the deployment, then start ' +
        'them again (docs/operations.md, "Scaling out")',
    );
  return inner;
};
