import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { DidRef } from './did.ts';

/**
 * The undertaker (Rucio's daemon, behaviour rule 7): expired DIDs are deleted, oldest expiry
 * first, unless one of their rules is locked. What deleting one DID means (detach from parents,
 * erase a collection, clear a file's expiry) is the DID decider's `EraseExpiredDid`; this decides
 * which DIDs a cycle takes.
 */

export type UndertakerTick = Readonly<{ now: string; dryRun: boolean }>;

export type ExpiredDid = DidRef & Readonly<{ expiredAt: string; lockedRules: number }>;

/** The DIDs the read models show as expired at the tick, with the locked rules on each. */
export type UndertakerFacts = Readonly<{ expired: readonly ExpiredDid[] }>;

export type DeleteExpiredDid = WorkflowOutput<'DeleteExpiredDid', DidRef>;
export type UndertakerOutput = DeleteExpiredDid | Skipped;

export const undertaker: Workflow<UndertakerTick, UndertakerFacts, UndertakerOutput> = {
  name: 'undertaker',
  decide: ({ now, dryRun }, { expired }) =>
    [...expired]
      .filter((did) => did.expiredAt < now)
      .sort((a, b) => (a.expiredAt < b.expiredAt ? -1 : a.expiredAt > b.expiredAt ? 1 : 0))
      .map((did): UndertakerOutput => {
        const what = `${did.scope}:${did.name}`;
        if (did.lockedRules > 0)
          return { type: 'Skipped', data: { what, reason: 'a locked replication rule protects it' } };
        if (dryRun) return { type: 'Skipped', data: { what, reason: 'dry run' } };
        return { type: 'DeleteExpiredDid', data: { scope: did.scope, name: did.name } };
      }),
};
