import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { Logger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { projectionReports, requestProjectionRebuild } from '../../projections/runtime/projectionStatus.ts';
import type { ProjectionStores } from '../../projections/runtime/projectionStores.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { Progress } from './progress.ts';

/**
 * `dms projections rebuild NAME [--detach]`: fills a new generation of the projection from the
 * start of the event log beside the serving one, then switches reads over. The running projector
 * of the projection's group picks the request up, and this command follows its progress until
 * reads have switched (or returns at once with `--detach`); without one, it does the work itself,
 * running that group's projections. Progress (the rebuild's position in the log, events/s, ETA)
 * goes to stderr.
 */
export const projectionsRebuildCommand = async (
  config: ServiceConfig,
  name: string,
  logger: Logger,
  options: Readonly<{ detach?: boolean }> = {},
): Promise<number> => {
  const projection = allProjections.find((candidate) => candidate.name === name);
  if (!projection) {
    console.error(`unknown projection ${name}; known: ${allProjections.map((candidate) => candidate.name).join(', ')}`);
    return 2;
  }
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  const { stores } = readModels;
  try {
    const request = await requestProjectionRebuild(stores, projection);
    console.log(
      request.alreadyUnderWay
        ? `a rebuild of ${name} into generation ${request.generation} is already under way`
        : `requested a rebuild of ${name} into generation ${request.generation}`,
    );
    const unit = config.eventStore.kind === 'sqlite' ? 'events' : 'positions';
    if (request.projectorRunning) {
      if (options.detach) {
        console.log(`projector ${request.projector} is running and will do it; follow it with: dms projections status`);
        return 0;
      }
      console.log(
        `projector ${request.projector} is running and will do it; following its progress (interrupting this leaves the rebuild running)`,
      );
      return await followRebuild(eventStore, stores, name, unit);
    }
    console.log('no projector is running: rebuilding here');
    const group = stores.groupOf(name)!;
    const runner = new ProjectionRunner({
      eventStore,
      readStore: stores.storeOfGroup(group.name),
      readModels,
      projections: group.projections,
      group: group.name,
      logger,
    });
    await runner.start();
    const progress = new Progress(`rebuild ${name}`, unit);
    const head = await eventStore.headPosition();
    const timer = setInterval(() => {
      const checkpoint = runner.status().find((status) => status.name === name)?.rebuild?.checkpoint;
      if (checkpoint !== undefined)
        progress.update(Number(checkpoint), head === 0n ? 1 : Number(checkpoint) / Number(head));
    }, 100);
    try {
      await runner.rebuildsFinished();
    } finally {
      clearInterval(timer);
    }
    progress.update(Number(head), 1);
    progress.finish();
    await runner.dropReplacedGenerations();
    await runner.stop();
    console.log(`reads of ${name} now use the rebuilt generation`);
    return 0;
  } finally {
    await eventStore.close();
    await readModels.close();
    await readStore.close();
  }
};

/** Polls the projector's rebuild checkpoint until reads have switched (0) or the rebuild failed (1). */
const followRebuild = async (
  eventStore: EventStore,
  stores: ProjectionStores,
  name: string,
  unit: string,
): Promise<number> => {
  const progress = new Progress(`rebuild ${name}`, unit);
  const projection = allProjections.filter((candidate) => candidate.name === name);
  for (;;) {
    const [report] = await projectionReports(eventStore, stores, projection);
    if (!report?.rebuild) {
      progress.update(Number(report?.checkpoint ?? 0n), 1);
      progress.finish();
      console.log(`reads of ${name} now use generation ${report?.generation ?? '?'}`);
      return 0;
    }
    if (report.rebuild.error) {
      progress.finish();
      console.error(`the rebuild failed: ${report.rebuild.error}`);
      return 1;
    }
    progress.update(Number(report.rebuild.checkpoint), report.rebuild.progress);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
