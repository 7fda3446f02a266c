import { flag, integer, number, text, DAY } from '../config/settingKinds.ts';

/** `YYYY-MM-DD`, a day of the calendar. */
const isCalendarDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]);
};

/** The `/config` options of lifetime exceptions and of atropos (domain/lifetimeException/atropos.ts). */
export const LIFETIME_EXCEPTION_SETTINGS = {
  /**
   * Lifetime exceptions (Rucio's `lifetime_model` section): requests are only taken while
   * `cutoff_date` (YYYY-MM-DD) is in the future; `max_extension` days (0: no bound) default and cap
   * an exception's end.
   */
  lifetimeModelCutoffDate: text('lifetime_model', 'cutoff_date', '', 'a date YYYY-MM-DD', isCalendarDate),
  lifetimeModelMaxExtension: integer('lifetime_model', 'max_extension', 0, 0, 36_500),
  /**
   * Atropos (Rucio's command-line options, by their names): seconds between cycles (its sleep,
   * 60 s), a dry run that only reports, the grace period a condemned rule lives on (a day) plus up
   * to `spread_period` seconds (0), purging the replicas and unlocking locked rules (both off), and
   * rules per cycle.
   */
  atroposInterval: number('atropos', 'interval', 60, 1, DAY),
  atroposDryRun: flag('atropos', 'dry_run', false),
  atroposGracePeriod: number('atropos', 'grace_period', DAY, 0, 365 * DAY),
  atroposSpreadPeriod: number('atropos', 'spread_period', 0, 0, 365 * DAY),
  atroposPurgeReplicas: flag('atropos', 'purge_replicas', false),
  atroposUnlock: flag('atropos', 'unlock', false),
  atroposMaxRules: integer('atropos', 'max_rules', 1000, 1, 100_000),
} as const;
