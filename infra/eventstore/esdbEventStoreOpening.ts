import { EnvironmentError } from '../environmentError.ts';
import type { Logger } from '../logger.ts';
import { EsdbEventStore } from './esdbEventStore.ts';
import type { EventStore } from './eventStore.ts';
import { leftStepsCheck } from './leftSteps.ts';

/** The log holds steps of the retired stepped protocol not known to be finished. */
export class LeftStepsError extends EnvironmentError {
  constructor(reason: string) {
    super(`The event store cannot be used yet: ${reason}`);
    this.name = 'LeftStepsError';
  }
}

/**
 * Opens the EventStoreDB / KurrentDB store the service writes through: a server without atomic
 * multi-stream appends is refused (esdbAppendPath.ts), and so is a log whose steps an older
 * deployment may have left half written (leftSteps.ts, one read at start). Says in the log which
 * server it took, once.
 */
export const openEsdbEventStore = async (connectionString: string, logger?: Logger): Promise<EventStore> => {
  const { store, check } = await EsdbEventStore.connect(connectionString);
  try {
    const steps = await leftStepsCheck(store);
    if (!steps.clean) throw new LeftStepsError(steps.reason);
  } catch (error) {
    await store.close();
    throw error;
  }
  logger?.info({ reason: check.reason }, 'event store: atomic multi-stream appends');
  return store;
};
