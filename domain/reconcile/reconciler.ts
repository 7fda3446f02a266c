import type { DidType } from '../did/did.ts';
import type { Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * The reconciler (issue 34): the daemons' queues are a fast path; the event log and the read
 * models are the truth. What waits for an event role's job shows in the read models, as Rucio's
 * daemons find their work in the database: a rule in INJECT whose time has come waits for the
 * injector, a dataset or container still flagged new waits for the transmogrifier. Left alone
 * longer than the grace (its job lost, failed, never enqueued), it gets its job again. (The
 * scheduled roles find their work in the read models at every cycle already: requests by state,
 * replicas by tombstone, rules and DIDs by expiry.)
 */

export type EnqueueInjection = WorkflowOutput<'EnqueueInjection', { ruleId: string; position: number }>;
export type EnqueueTransmogrification = WorkflowOutput<
  'EnqueueTransmogrification',
  { scope: string; name: string; didType: DidType; position: number }
>;

export type ReconcilerInput = Readonly<{ now: string; graceSeconds: number }>;

export type ReconcilerFacts = Readonly<{
  /** Rules in INJECT, the least recently changed first: when each last changed, when it may be injected. */
  injecting: readonly Readonly<{ ruleId: string; updatedAt: string; injectAfter: string | null; position: number }>[];
  /** DIDs flagged new, with when they were created. */
  newDids: readonly Readonly<{ scope: string; name: string; didType: DidType; createdAt: string; position: number }>[];
}>;

/** The moment before which something left alone counts as stranded. */
export const strandedBefore = (now: string, graceSeconds: number): string =>
  new Date(Date.parse(now) - graceSeconds * 1000).toISOString();

export const reconciler: Workflow<ReconcilerInput, ReconcilerFacts, EnqueueInjection | EnqueueTransmogrification> = {
  name: 'reconciler',
  decide: ({ now, graceSeconds }, { injecting, newDids }) => {
    const before = strandedBefore(now, graceSeconds);
    return [
      ...injecting
        .filter((rule) => rule.updatedAt < before && (rule.injectAfter === null || rule.injectAfter <= now))
        .map(({ ruleId, position }): EnqueueInjection => ({ type: 'EnqueueInjection', data: { ruleId, position } })),
      ...newDids
        .filter((did) => did.didType !== 'FILE' && did.createdAt < before)
        .map(({ scope, name, didType, position }): EnqueueTransmogrification => ({
          type: 'EnqueueTransmogrification',
          data: { scope, name, didType, position },
        })),
    ];
  },
};
