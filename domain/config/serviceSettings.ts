import { DAY, integer, number, text } from './settingKinds.ts';

/** `/config` options of the service as a whole. */
export const SERVICE_SETTINGS = {
  /** The policy schema named in metalink documents. */
  policySchema: text('policy', 'schema', 'generic'),
  /** Origins allowed by the CORS pre-flight, comma-separated. */
  webuiUrls: text('webui', 'urls', ''),
  /**
   * The reconciler (issue 34), which makes sure every area's pending work has its job: seconds
   * between cycles; how long work waiting for an event role's job (a rule in INJECT, a DID flagged
   * new) is left alone before it gets its job again; events of the log whose jobs one cycle makes
   * sure of (not in Rucio, whose daemons find all their work in the database).
   */
  reconcilerInterval: number('reconciler', 'interval', 10, 1, DAY),
  reconcilerGrace: number('reconciler', 'grace', 60, 1, DAY),
  reconcilerMaxEvents: integer('reconciler', 'max_events', 20_000, 100, 1_000_000),
} as const;
