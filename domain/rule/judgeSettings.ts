import { integer, number, DAY } from '../config/settingKinds.ts';

/** The judge's `/config` options (domain/rule/judge.ts). */
export const JUDGE_SETTINGS = {
  /** The judge-repairer: seconds between cycles, how long a STUCK rule is left alone first (Rucio: 1800 s), rules per cycle. */
  repairerInterval: number('judge-repairer', 'interval', 60, 1, DAY),
  repairerDelta: number('judge-repairer', 'delta', 1800, 0, 30 * DAY),
  repairerMaxRules: integer('judge-repairer', 'max_rules', 100, 1, 100_000),
  /** The judge-cleaner: seconds between cycles and expired rules per cycle (Rucio: 200). */
  cleanerInterval: number('judge-cleaner', 'interval', 60, 1, DAY),
  cleanerMaxRules: integer('judge-cleaner', 'max_rules', 200, 1, 100_000),
} as const;
