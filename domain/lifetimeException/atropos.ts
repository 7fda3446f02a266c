import { createHash } from 'node:crypto';
import { didKey } from '../did/did.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * Rucio's atropos (behaviour reference §8) as a workflow: rules past their end of life (`eol_at`)
 * get a short lifetime, the grace period plus a spread, after which the judge-cleaner deletes
 * them; unless an approved lifetime exception covers their DID. An exception that ends later than
 * the rule's end of life moves the rule's `eol_at` to the exception's end (so the rule comes back
 * when the exception runs out); one without an end protects it for good. Rucio's lifetime model
 * (which recomputes `eol_at` for the ATLAS policy only) has no counterpart: the rules keep the
 * `eol_at` they were given.
 */

export type AtroposTick = Readonly<{
  now: string;
  /** Only report what would be done (`atropos.dry_run`). */
  dryRun: boolean;
  /** Seconds a condemned rule lives on (`atropos.grace_period`, Rucio's default a day). */
  gracePeriod: number;
  /** Up to this many seconds more, spread over the rules so they do not all go at once (`atropos.spread_period`). */
  spreadPeriod: number;
  /** Also purge the rules' replicas when they are deleted (`atropos.purge_replicas`). */
  purgeReplicas: boolean;
  /** Also unlock locked rules, so that the cleaner may delete them (`atropos.unlock`). */
  unlock: boolean;
}>;

export type RuleBeyondEndOfLife = Readonly<{
  ruleId: string;
  scope: string;
  name: string;
  eolAt: string;
  expiresAt: string | null;
  locked: boolean;
}>;

export type AtroposFacts = Readonly<{
  /** Rules whose `eol_at` is past, soonest first. */
  rules: readonly RuleBeyondEndOfLife[];
  /**
   * The latest end of the approved exceptions of each DID (`scope:name`), null for an exception
   * without end; DIDs without an approved exception are missing.
   */
  exceptions: ReadonlyMap<string, string | null>;
}>;

/** The rule's end of life moves to its DID's exception's end. */
export type ExtendEndOfLife = WorkflowOutput<'ExtendEndOfLife', { ruleId: string; eolAt: string }>;
/** The rule gets `lifetime` seconds; the DID gets `eol_at` metadata, as Rucio sets it. */
export type ExpireRule = WorkflowOutput<
  'ExpireRule',
  {
    ruleId: string;
    scope: string;
    name: string;
    eolAt: string;
    lifetime: number;
    purgeReplicas: boolean;
    unlock: boolean;
  }
>;

export type AtroposOutput = ExtendEndOfLife | ExpireRule | Skipped;

/** The spread of one rule: a number in [0, spread] fixed by its id, so a cycle run again decides the same. */
const spreadOf = (ruleId: string, spread: number): number =>
  spread <= 0 ? 0 : createHash('sha1').update(ruleId).digest().readUInt32BE(0) % (spread + 1);

export const atropos: Workflow<AtroposTick, AtroposFacts, AtroposOutput> = {
  name: 'atropos',
  decide: (tick, { rules, exceptions }) =>
    [...rules]
      .filter((rule) => rule.eolAt < tick.now)
      .sort((a, b) => (a.eolAt < b.eolAt ? -1 : a.eolAt > b.eolAt ? 1 : 0))
      .map((rule): AtroposOutput => {
        const what = `rule ${rule.ruleId} on ${rule.scope}:${rule.name}`;
        let eolAt = rule.eolAt;
        const key = didKey(rule.scope, rule.name);
        if (exceptions.has(key)) {
          const until = exceptions.get(key)!;
          if (until === null)
            return {
              type: 'Skipped',
              data: { what, reason: 'an approved lifetime exception without end covers its DID' },
            };
          if (until > tick.now) {
            if (tick.dryRun)
              return {
                type: 'Skipped',
                data: { what, reason: `dry run: its end of life would move to ${until} (approved lifetime exception)` },
              };
            return { type: 'ExtendEndOfLife', data: { ruleId: rule.ruleId, eolAt: until } };
          }
          if (until > eolAt) eolAt = until;
        }
        const lifetime = tick.gracePeriod + spreadOf(rule.ruleId, tick.spreadPeriod);
        const latest = new Date(Date.parse(tick.now) + (tick.gracePeriod + tick.spreadPeriod) * 1000).toISOString();
        // Rucio would set the lifetime again on every cycle, pushing the deletion back each time.
        if (rule.expiresAt !== null && rule.expiresAt <= latest)
          return { type: 'Skipped', data: { what, reason: `expires at ${rule.expiresAt} already` } };
        if (tick.dryRun)
          return {
            type: 'Skipped',
            data: { what, reason: `dry run: would expire in ${lifetime} s (end of life ${eolAt})` },
          };
        return {
          type: 'ExpireRule',
          data: {
            ruleId: rule.ruleId,
            scope: rule.scope,
            name: rule.name,
            eolAt,
            lifetime,
            purgeReplicas: tick.purgeReplicas,
            unlock: tick.unlock && rule.locked,
          },
        };
      }),
};
