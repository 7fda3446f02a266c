import { settingValue, type ConfigSections, type Setting } from '../domain/config/settings.ts';
import type { CommandMetadata } from '../domain/shared/event.ts';
import { asRoot, stepOf, type CycleReport, type JobTrigger, type ScheduledRole, type SkippedItem } from './role.ts';
import type { WorkerContext } from './workerContext.ts';

/**
 * The kit every scheduled role is made with. A role says what is particular to it: its name and
 * interval (`/config`), the settings a cycle reads, the pages of work a cycle goes through
 * (`pages`: read from the read models, a chunk at a time; or `read`, when a cycle reads its work at once) and what one page comes to (`work`: the
 * workflow decides, the commands act, and a report says what was done and what was left). The
 * kit does the rest, the same for all:
 *
 * - one job of the role's BullMQ job scheduler is one cycle; the `/config` options are read once
 *   at its start (`Cycle`), so every page of a cycle sees the same settings;
 * - the pages are taken one after the other, the next only once the previous page is worked (a
 *   page worked changes what the next read finds);
 * - the reports of the pages are added up into the cycle's (`dms workers status`);
 * - a command refusing one item (a `RucioError`) leaves that item skipped with its reason and the
 *   cycle goes on (`carryOut`, `refusalOf` in role.ts); any other error fails the job, which BullMQ
 *   runs again, and since commands derive their event ids from the job, nothing is appended twice;
 * - the heartbeats and the schedule (and its interval changes) are the host's (workerHost.ts).
 *
 *     export const undertakerRole = scheduledRole({
 *       name: undertaker.name,
 *       interval: SETTINGS.undertakerInterval,
 *       settings: [SETTINGS.undertakerMaxDids, ...],
 *       read: (cycle) => expiredDids(cycle.context.readModels, cycle.now, ...),
 *       work: (expired, cycle) => carryOut(undertaker.decide(...), ...),
 *     })
 */
export type ScheduledRoleDefinition<Page> = Readonly<{
  /** The role's name, which is also its queue's and its job scheduler's. */
  name: string;
  /** Seconds between cycles, from `/config`. */
  interval: Setting<number>;
  /** Other settings a cycle reads (chunk sizes, bounds), shown by `dms workers status`; default none. */
  settings?: readonly Setting<unknown>[];
  concurrency?: number;
  /** One cycle at a time across every worker process (ScheduledRole's `exclusive`); default off. */
  exclusive?: boolean;
  /** What one page comes to: decided by the role's workflow, carried out by commands, reported. */
  work(page: Page, cycle: Cycle, index: number): Promise<CycleReport>;
}> &
  (
    | Readonly<{
        /** The pages of work of one cycle, read lazily: the next is read once the previous one is worked. */
        pages(cycle: Cycle): AsyncIterable<Page>;
        read?: never;
      }>
    | Readonly<{
        /** The one page of a role whose cycle reads its work at once; nothing to do when undefined. */
        read(cycle: Cycle): Promise<Page | undefined>;
        pages?: never;
      }>
  );

/** One cycle of a scheduled role, as its pages and their work see it. */
export type Cycle = Readonly<{
  trigger: JobTrigger;
  context: WorkerContext;
  /** The `/config` options as the cycle started. */
  sections: ConfigSections;
  /** When the cycle started, in ISO 8601: what its workflow decides by, unless a step times itself. */
  now: string;
  /** One declared setting's value for this cycle. */
  setting<T>(setting: Setting<T>): T;
  /** The metadata of what the cycle appends about `item`, as root, caused by the job (role.ts `asRoot`). */
  asRoot(item: string): CommandMetadata;
  /** The same for one step of the cycle, timed when made by the context's clock (role.ts `stepOf`). */
  stepOf(step: string): CommandMetadata;
}>;

export const scheduledRole = <Page>(definition: ScheduledRoleDefinition<Page>): ScheduledRole => {
  const { name, interval, settings, concurrency, exclusive } = definition;
  return {
    kind: 'scheduled',
    name,
    interval,
    ...(settings ? { settings } : {}),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(exclusive === undefined ? {} : { exclusive }),
    async run(trigger, context) {
      const sections = await context.settings();
      const cycle: Cycle = {
        trigger,
        context,
        sections,
        now: trigger.startedAt.toISOString(),
        setting: (setting) => settingValue(sections, setting),
        asRoot: (item) => asRoot(name, trigger, item),
        stepOf: (step) => stepOf(name, trigger, step, context.clock),
      };
      const tally = new CycleTally();
      let index = 0;
      for await (const page of definition.pages ? definition.pages(cycle) : onePage(definition.read, cycle)) {
        tally.add(await definition.work(page, cycle, index));
        index += 1;
      }
      return tally.report();
    },
  };
};

/** The pages of a role whose cycle reads its work once: none when `read` finds nothing (undefined). */
async function* onePage<Page>(read: (cycle: Cycle) => Promise<Page | undefined>, cycle: Cycle): AsyncIterable<Page> {
  const page = await read(cycle);
  if (page !== undefined) yield page;
}

/** The reports of a cycle's pages, added up: counts summed, skipped items and details kept in order. */
export class CycleTally {
  private done = 0;
  private readonly skipped: SkippedItem[] = [];
  private readonly details: string[] = [];

  add(report: CycleReport): void {
    this.done += report.done;
    this.skipped.push(...report.skipped);
    if (report.detail) this.details.push(report.detail);
  }

  report(): CycleReport {
    return {
      done: this.done,
      skipped: this.skipped,
      ...(this.details.length > 0 ? { detail: this.details.join('; ') } : {}),
    };
  }
}
