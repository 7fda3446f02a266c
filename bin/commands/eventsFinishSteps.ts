import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { finishLeftSteps } from '../../infra/eventstore/leftSteps.ts';
import { openEventLogForTools } from '../../infra/stores.ts';
import { grouped } from './progress.ts';

/**
 * `dms events finish-steps`: once, when a deployment that wrote through the retired stepped
 * protocol (EventStoreDB before KurrentDB 25.1) moves to this version. Completes the multi-stream
 * steps its writers left half written and closes `steps-journal`, so that the service starts on
 * the log (infra/eventstore/leftSteps.ts). Safe to run again, and on the server before or after
 * its upgrade; every process of the older deployment should be stopped first, since one still
 * running opens new steps, which keeps the journal open. Exit 1 when a step could not be
 * completed (its streams moved on without it): its events stay partly written, and are named.
 */
export const eventsFinishStepsCommand = async (config: ServiceConfig): Promise<number> => {
  const eventStore = await openEventLogForTools(config);
  try {
    const finished = await finishLeftSteps(eventStore, {
      onStep: (stepId, outcome) => console.error(`step ${stepId}: ${outcome}`),
    });
    console.log(
      finished.open === 0
        ? 'no multi-stream step was left open'
        : `${grouped(finished.open)} steps were left open: ${grouped(finished.completed)} completed, ` +
            `${grouped(finished.abandoned.length)} abandoned; the journal is closed`,
    );
    for (const { stepId, streams } of finished.abandoned)
      console.log(
        `  abandoned ${stepId}: ${streams.length > 0 ? `streams ${streams.join(', ')} moved on without its events` : 'its intent was never written, so none of it was appended'}`,
      );
    return finished.abandoned.some(({ streams }) => streams.length > 0) ? 1 : 0;
  } finally {
    await eventStore.close();
  }
};
