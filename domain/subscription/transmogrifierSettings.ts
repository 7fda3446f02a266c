import { integer, number, text, DAY } from '../config/settingKinds.ts';

/** The transmogrifier's `/config` options (domain/subscription/transmogrifier.ts). */
export const TRANSMOGRIFIER_SETTINGS = {
  /** The activity of rules a subscription makes without naming one (Rucio's transmogrifier: `rules.default_activity`, else `default`). */
  rulesDefaultActivity: text('rules', 'default_activity', 'default'),
  /**
   * The transmogrifier's periodic pass: seconds between cycles (Rucio's daemon sleeps 60 s), in
   * which subscriptions past their lifetime become INACTIVE and retroactive ones go through the
   * DIDs that existed before them, `chunk_size` DIDs per step, at most `max_dids` per cycle.
   */
  transmogrifierRetroactiveInterval: number('transmogrifier-retroactive', 'interval', 60, 0.1, DAY),
  transmogrifierRetroactiveChunkSize: integer('transmogrifier-retroactive', 'chunk_size', 500, 1, 10_000),
  transmogrifierRetroactiveMaxDids: integer('transmogrifier-retroactive', 'max_dids', 10_000, 1, 1_000_000),
} as const;
