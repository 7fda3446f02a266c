import type { Upcasters } from '../../domain/shared/upcasting.ts';
import { ConfigurationInvalidError, type ServiceConfig } from '../../infra/serviceConfig.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { Logger } from '../../infra/logger.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { openReadStoreAt, readStorePlace } from '../../infra/stores.ts';
import type { ProjectionGroup } from '../index.ts';
import { GroupPositions } from './groupPositions.ts';
import type { ProgressReport } from './progressRelay.ts';
import type { ProjectionProgress } from './projectionProgress.ts';
import { ProjectionRunner } from './projectionRunner.ts';
import { layoutGroups, ProjectionStores } from './projectionStores.ts';
import { ReadModels } from './readModels.ts';

/** Projection groups running somewhere this process started them: on a thread, or here. */
export interface GroupHost {
  readonly groups: readonly string[];
  stop(): Promise<void>;
}

/**
 * Starts the host of some groups; it tells `onReport` where each group stands, first with a
 * `ready` per group.
 */
export type GroupStarter = (
  groups: readonly string[],
  onReport: (report: ProgressReport) => void,
) => Promise<GroupHost>;

/**
 * The projection groups this process runs, each on its host (a thread of its own with
 * `DMS_PROJECTION_THREAD`, else a runner on this thread), and what they report: each group's
 * applied position, which read-your-writes waits on, and each switch of generation, which reads
 * follow at once. Listeners (a cluster's relay to its API workers, the Redis signal to other
 * processes) hear every report after this process has taken it in.
 */
export class RunningProjections implements ProjectionProgress {
  private readonly positions: GroupPositions;
  private readonly listeners = new Set<(report: ProgressReport) => void>();
  private hosts: readonly GroupHost[] = [];

  private constructor(
    readonly groups: readonly ProjectionGroup[],
    private readonly readModels: ReadModels,
  ) {
    this.positions = new GroupPositions(groups.map((group) => group.name));
  }

  /**
   * Starts every host at once, `hosts` of them (default one per group) with the groups dealt
   * out in turn; a host that fails to start stops the others, and its failure is thrown.
   */
  static async start(
    groups: readonly ProjectionGroup[],
    readModels: ReadModels,
    startHost: GroupStarter,
    hosts = groups.length,
  ): Promise<RunningProjections> {
    const running = new RunningProjections(groups, readModels);
    const count = Math.max(1, Math.min(hosts, groups.length));
    const dealt = Array.from({ length: count }, (_, host) =>
      groups.filter((_, index) => index % count === host).map((group) => group.name),
    );
    const started = await Promise.allSettled(
      dealt.map((names) => startHost(names, (report) => running.receive(report))),
    );
    running.hosts = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) {
      await running.stop();
      throw failed.reason;
    }
    return running;
  }

  waitFor(position: bigint, timeoutMs: number, groups?: readonly string[]): Promise<boolean> {
    return this.positions.wait(position, timeoutMs, groups);
  }

  appliedVersion(): bigint {
    return this.positions.version();
  }

  /** The position every group has applied. */
  lowestPosition(): bigint {
    return this.positions.lowest();
  }

  /** Where every group stands and the generations served: a `ready` report for a listener joining now. */
  snapshot(): ProgressReport {
    return {
      type: 'ready',
      positions: this.positions.snapshot(),
      generations: Object.fromEntries(
        this.groups.flatMap((group) =>
          group.projections.map((projection) => [projection.name, this.readModels.servingGeneration(projection.name)]),
        ),
      ),
    };
  }

  /** Hands every report to `listener` once this process has taken it in; returns what stops it. */
  onReport(listener: (report: ProgressReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.stop()));
    this.positions.close();
  }

  private receive(report: ProgressReport): void {
    if (report.type === 'generation') this.readModels.setServingGeneration(report.name, report.generation);
    else if (report.type === 'progress') this.positions.advance(report.group, report.position);
    else {
      for (const [name, generation] of Object.entries(report.generations))
        this.readModels.setServingGeneration(name, generation);
      for (const [group, position] of Object.entries(report.positions)) this.positions.advance(group, position);
    }
    for (const listener of [...this.listeners]) listener(report);
  }
}

/** The group of this name in the configured layout. */
export const configuredGroup = (config: ServiceConfig, name: string): ProjectionGroup => {
  const groups = layoutGroups(config.projectionLayout);
  const group = groups.find((candidate) => candidate.name === name);
  if (!group)
    throw new ConfigurationInvalidError([
      `unknown projection group ${name} (known: ${groups.map((candidate) => candidate.name).join(', ')})`,
    ]);
  return group;
};

/**
 * The read store a group is written into, opened by the thread or process that writes it (which
 * checkpoints it): the group's own place, or in the single layout the shared one.
 */
export const openGroupStore = (config: ServiceConfig, group: string): Promise<ReadStore> => {
  configuredGroup(config, group);
  return openReadStoreAt(
    config.projectionLayout === 'single' ? readStorePlace(config) : readStorePlace(config, group),
    { backgroundCheckpoints: true },
  );
};

/** A group running on this thread: its runner, reachable for the tests and the rebuild command. */
export type GroupRun = GroupHost & { readonly runner: ProjectionRunner };

/**
 * Runs one group's projections on this thread (a projection thread, or a process without them):
 * its ProjectionRunner over the group's store, reporting as a projection thread does.
 */
export const runGroup = async (
  options: Readonly<{
    config: ServiceConfig;
    group: string;
    eventStore: EventStore;
    readStore: ReadStore;
    logger: Logger;
    report: (report: ProgressReport) => void;
    upcasters?: Upcasters;
  }>,
): Promise<GroupRun> => {
  const group = configuredGroup(options.config, options.group);
  const readModels = new ReadModels(ProjectionStores.in(options.readStore, [group]));
  await readModels.refresh();
  const runner = new ProjectionRunner({
    eventStore: options.eventStore,
    readStore: options.readStore,
    readModels,
    projections: group.projections,
    group: group.name,
    logger: options.logger,
    dropGraceMs: options.config.generationGraceMs,
    ...(options.upcasters ? { upcasters: options.upcasters } : {}),
    onProgress: (position) => options.report({ type: 'progress', group: group.name, position }),
    onServingGeneration: (name, generation) => options.report({ type: 'generation', name, generation }),
  });
  await runner.start();
  options.report({
    type: 'ready',
    positions: { [group.name]: runner.position },
    generations: Object.fromEntries(
      group.projections.map((projection) => [projection.name, readModels.servingGeneration(projection.name)]),
    ),
  });
  return { groups: [group.name], runner, stop: () => runner.stop() };
};

/** Several groups on this thread, each with its runner (runGroup), as one host. */
export const runGroupsHere = async (
  groups: readonly string[],
  runOne: (group: string) => Promise<GroupRun>,
): Promise<GroupHost & { readonly runs: readonly GroupRun[] }> => {
  const runs: GroupRun[] = [];
  try {
    for (const group of groups) runs.push(await runOne(group));
  } catch (error) {
    for (const run of runs) await run.stop();
    throw error;
  }
  return {
    groups,
    runs,
    stop: async () => {
      for (const run of runs) await run.stop();
    },
  };
};
