import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';
import type { EventJobs, PlannedJob } from '../eventJobs.ts';
import type { EnsuredJobs, JobQueues } from '../jobQueues.ts';
import { workerCheckpointsCollection } from '../reactor.ts';

/**
 * The reconciler's pass over the event log: every event a role reacts to must have its job, in
 * any state but lost. The reactor enqueues them as the log grows and saves its checkpoint in the
 * read store; Redis keeps them in memory and writes its append-only file every second, so a
 * redis-server killed (or a machine that stopped) loses the jobs of its last second while the
 * reactor's checkpoint, already past them, says they were enqueued. This pass follows the log
 * from a checkpoint of its own, `SETTLED_MS` behind its head (past Redis's last unwritten second),
 * and enqueues again whatever job is missing, with the same id and data: a job that is there (or
 * enqueued meanwhile) is never enqueued twice, and a job run again appends nothing twice (its
 * commands derive their event ids from it). It needs no reactor: a process of only some roles
 * enqueues the jobs of every role. A Redis that came back without any of its data (its files
 * lost, another server at the same address) holds none of the jobs the pass made sure of: the
 * pass knows it by the data's id (`JobQueues.dataEpoch`) and starts again from the start of the
 * log, every job enqueued again and each run again appending nothing it had appended.
 */

/** How old an event must be before its job is looked for: Redis's append-only file has it by then. */
export const SETTLED_MS = 5000;

export const JOB_AUDIT_CHECKPOINT = 'job-audit';

/** The pass's checkpoint, and the data of Redis it made sure of (JobQueues.dataEpoch). */
type CheckpointDocument = Document & { checkpoint: string; epoch?: string; updatedAt: string };

/** `rewound`: Redis came back without its data, and the pass started again from the start of the log. */
export type AuditReport = EnsuredJobs & { events: number; checkpoint: bigint; rewound: boolean };

const BATCH = 1000;

export const auditEventJobs = async (
  parts: Readonly<{ eventStore: EventStore; readStore: ReadStore; jobs: EventJobs; queues: JobQueues }>,
  options: Readonly<{ maxEvents: number; now?: number; delaysFrom?: number; checkpoints?: CollectionSpec }>,
): Promise<AuditReport> => {
  const checkpoints = parts.readStore.collection<CheckpointDocument>(
    options.checkpoints ?? workerCheckpointsCollection,
  );
  const stored = await checkpoints.get(JOB_AUDIT_CHECKPOINT);
  const epoch = await parts.queues.dataEpoch();
  // Every job this pass made sure of went with Redis's data: it makes sure of them all again.
  const rewound = stored?.epoch !== undefined && stored.epoch !== epoch;
  let checkpoint = rewound ? 0n : BigInt(stored?.checkpoint ?? '0');
  // Settled by the wall clock (Redis writes its file by it); delayed jobs wait by the service's clock.
  const settledBefore = (options.now ?? Date.now()) - SETTLED_MS;
  const delaysFrom = options.delaysFrom ?? options.now ?? Date.now();
  const report: AuditReport = { events: 0, checkpoint, present: 0, added: 0, retried: 0, rewound };
  const save = (position: bigint) =>
    checkpoints.replaceOne(
      { _id: JOB_AUDIT_CHECKPOINT },
      { _id: JOB_AUDIT_CHECKPOINT, checkpoint: position.toString(), epoch, updatedAt: new Date().toISOString() },
      { upsert: true },
    );
  if (rewound || (stored && stored.epoch === undefined)) await save(checkpoint);
  while (report.events < options.maxEvents) {
    const maxCount = Math.min(BATCH, options.maxEvents - report.events);
    const batch = await parts.eventStore.readAll({ after: checkpoint, maxCount });
    // Only the events old enough, in the log's order: the rest wait for the next cycle.
    const young = batch.findIndex((event) => event.recordedAt.getTime() > settledBefore);
    const ready = young === -1 ? batch : batch.slice(0, young);
    if (ready.length === 0) break;
    const jobs: PlannedJob[] = ready.flatMap((event) => parts.jobs.jobsOf(event, delaysFrom));
    const ensured = await parts.queues.ensure(jobs);
    report.present += ensured.present;
    report.added += ensured.added;
    report.retried += ensured.retried;
    report.events += ready.length;
    checkpoint = ready.at(-1)!.position;
    // Forward only: a cycle that overran its interval may finish after the next one.
    const current = await checkpoints.get(JOB_AUDIT_CHECKPOINT);
    if (!current || current.epoch !== epoch || BigInt(current.checkpoint) < checkpoint) await save(checkpoint);
    if (young !== -1 || batch.length < maxCount) break;
  }
  report.checkpoint = checkpoint;
  return report;
};
