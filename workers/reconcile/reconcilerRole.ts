import { SETTINGS } from '../../domain/config/settings.ts';
import { reconciler, strandedBefore, type ReconcilerFacts } from '../../domain/reconcile/reconciler.ts';
import { newDidsCreatedBefore } from '../../projections/did/didQueries.ts';
import { rulesInState } from '../../projections/rule/ruleQueries.ts';
import type { PlannedJob } from '../eventJobs.ts';
import { injectionJobOf } from '../rule/judgeRoles.ts';
import { scheduledRole } from '../scheduledRole.ts';
import { transmogrificationJobOf } from '../subscription/transmogrifierRoles.ts';
import { auditEventJobs } from './jobAudit.ts';

/** Stranded items looked at per cycle, of each kind. */
const STRANDED_PER_CYCLE = 1000;

/** A read-model document's position (`_pos`, the last event applied to it), 0 when it has none. */
const positionOf = (document: { _pos?: unknown }): number => (typeof document._pos === 'number' ? document._pos : 0);

/**
 * The reconciler as a scheduled role (issue 34), every `reconciler.interval` seconds: first the
 * event log behind its head (every event a role reacts to has its job, else it is enqueued again:
 * jobAudit.ts), then the read models (work waiting for an event role's job for longer than
 * `reconciler.grace` gets it again: the workflow in domain/reconcile/). Whatever it enqueues has
 * an id derived from what it stands for, so a cycle run twice enqueues nothing twice, and the
 * jobs' commands derive their event ids from the job, so nothing is appended twice either.
 */
export const reconcilerRole = scheduledRole({
  name: reconciler.name,
  // One pass at a time across all worker processes: two would only do the same work twice.
  exclusive: true,
  interval: SETTINGS.reconcilerInterval,
  settings: [SETTINGS.reconcilerGrace, SETTINGS.reconcilerMaxEvents],
  // One page: the queues to reconcile. The log is audited before the read models are read, so a
  // job the audit enqueued again is not also found stranded.
  read: ({ context }) => Promise.resolve({ reconciliation: context.reconciliation }),
  async work({ reconciliation }, { context, now, setting }) {
    if (!reconciliation)
      return { done: 0, skipped: [{ what: 'the queues', reason: 'this process reaches no queue to reconcile' }] };
    const audit = await auditEventJobs(
      {
        eventStore: context.commands.eventStore,
        readStore: context.readModels.store,
        jobs: reconciliation.eventJobs,
        queues: reconciliation.queues,
      },
      { maxEvents: setting(SETTINGS.reconcilerMaxEvents), delaysFrom: context.clock.now() },
    );

    if (audit.rewound)
      context.logger.error(
        { daemon: reconciler.name },
        'Redis came back without its data: the jobs of every event of the log are looked for again from its start',
      );
    const graceSeconds = setting(SETTINGS.reconcilerGrace);
    const before = strandedBefore(now, graceSeconds);
    const facts: ReconcilerFacts = {
      injecting: (await rulesInState(context.readModels, 'INJECT', before, STRANDED_PER_CYCLE)).map((rule) => ({
        ruleId: rule.id,
        updatedAt: rule.updated_at,
        injectAfter: rule.inject_after,
        position: positionOf(rule),
      })),
      newDids: (await newDidsCreatedBefore(context.readModels, before, STRANDED_PER_CYCLE)).map((did) => ({
        scope: did.scope,
        name: did.name,
        didType: did.did_type,
        createdAt: did.created_at,
        position: positionOf(did),
      })),
    };
    const jobs: PlannedJob[] = reconciler
      .decide({ now, graceSeconds }, facts)
      .map((output) =>
        output.type === 'EnqueueInjection'
          ? injectionJobOf(output.data.ruleId, output.data.position)
          : transmogrificationJobOf(output.data, output.data.position),
      );
    const stranded = await reconciliation.queues.ensure(jobs);
    const done = audit.added + audit.retried + stranded.added + stranded.retried;
    return {
      done,
      skipped: [],
      detail:
        `log to ${audit.checkpoint} (${audit.events} events${audit.rewound ? ', from the start: Redis lost its data' : ''}): ` +
        `${audit.added} jobs enqueued again, ${audit.retried} retried; ` +
        `stranded: ${stranded.added} enqueued again, ${stranded.retried} retried, ${stranded.present} already queued`,
    };
  },
});
