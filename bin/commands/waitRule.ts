import { setTimeout as sleep } from 'node:timers/promises';
import { ruleJson } from '../../api/routes/rule/ruleRendering.ts';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { openStores } from '../../infra/stores.ts';
import type { RuleDocument } from '../../projections/rule/ruleProjection.ts';
import { findRule } from '../../projections/rule/ruleQueries.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';

/** How often the read models are asked; a rule's state changes in steps of a worker cycle. */
const POLL_MS = 200;

export type WaitRuleOptions = Readonly<{ timeoutSeconds: number; json?: boolean; pollMs?: number }>;

const summary = (rule: RuleDocument): string =>
  `${rule.state} (locks OK ${rule.locks_ok_cnt}, replicating ${rule.locks_replicating_cnt}, stuck ${rule.locks_stuck_cnt})` +
  (rule.error ? `: ${rule.error}` : '');

/**
 * Waits until a rule is in `state`, as the read models show it (what `GET /rules/{id}` answers),
 * for scripts and walk-throughs that go on once the copies are made. Prints the rule when it is
 * (one line, or with `--json` the document `GET /rules/{id}` answers), each other state it passes through on stderr; exit 1 when
 * the time runs out first, naming the state it is in and its error.
 */
export const waitRuleCommand = async (
  config: ServiceConfig,
  ruleId: string,
  state: string,
  options: WaitRuleOptions,
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  const started = Date.now();
  const deadline = started + options.timeoutSeconds * 1000;
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  try {
    let seen = '';
    for (;;) {
      // A rebuild may switch reads to a new generation while we wait.
      await readModels.refresh();
      const rule = await findRule(readModels, ruleId);
      if (rule?.state === state) {
        if (options.json) console.log(JSON.stringify(ruleJson(rule)));
        else console.log(`rule ${ruleId} ${summary(rule)} after ${seconds()} s`);
        return 0;
      }
      const now = rule ? summary(rule) : 'not found';
      if (now !== seen) console.error(`rule ${ruleId} ${now}`);
      seen = now;
      if (Date.now() >= deadline) {
        console.error(`rule ${ruleId} is not ${state} after ${seconds()} s: ${now}`);
        return 1;
      }
      await sleep(Math.min(options.pollMs ?? POLL_MS, Math.max(0, deadline - Date.now())));
    }
  } finally {
    await eventStore.close();
    await readModels.close();
    await readStore.close();
  }
};
