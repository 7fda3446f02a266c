import { recordReads } from '../../commands/replica/replicaAccessCommands.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import type { DidRef } from '../../domain/did/did.ts';
import { kronos, storedRead, type TraceRead } from '../../domain/trace/kronos.ts';
import { TraceBuffer } from '../../infra/traces/traceBuffer.ts';
import { parentsOfMany } from '../../projections/did/didQueries.ts';
import { activeRses } from '../../projections/replica/deletionQueries.ts';
import { skippedOf, withoutSkipped } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';
import { contentDigest } from '../stepCause.ts';

const DAEMON = 'kronos';

/**
 * Reads younger than this are left for the next cycle: another API process may still be writing
 * reads of that moment, and a batch read again after a crash must be the same batch (its cause,
 * and so its event ids, come from the reads it holds).
 */
const SETTLE_MS = 2000;

/** Batches one cycle records at most, so a backlog is worked through without holding one job for long. */
const BATCHES_PER_CYCLE = 20;

/**
 * Kronos (Rucio's tracer daemon) on a schedule (`tracer-kronos.interval`, 10 s): takes the reads
 * the trace routes kept (infra/traces/traceBuffer.ts), `tracer-kronos.chunksize` at a time, lets
 * the workflow gather them per replica and per dataset (domain/trace/kronos.ts), records them
 * (one event per replica and per dataset read in the batch, however many traces:
 * commands/replica/replicaAccessCommands.ts), then forgets them. A crash between the two records the
 * batch again with the same event ids, which appends nothing twice.
 */
export const kronosRole = scheduledRole({
  name: DAEMON,
  interval: SETTINGS.kronosInterval,
  settings: [SETTINGS.kronosChunkSize],
  async *pages({ context, trigger, setting }) {
    const buffer = new TraceBuffer(context.readModels.store);
    const chunkSize = setting(SETTINGS.kronosChunkSize);
    const settledBefore = new Date(trigger.startedAt.getTime() - SETTLE_MS);
    let rseIds: ReadonlyMap<string, string> | undefined;
    for (let batch = 0; batch < BATCHES_PER_CYCLE; batch += 1) {
      // Read once the previous batch is recorded and forgotten.
      const stored = await buffer.oldest(chunkSize, settledBefore);
      if (stored.length === 0) return;
      rseIds ??= new Map((await activeRses(context.readModels)).map((rse) => [rse.rse, rse.id]));
      yield { buffer, stored, rseIds };
      if (stored.length < chunkSize) return;
    }
  },
  async work({ buffer, stored, rseIds }, { context, asRoot }) {
    const reads = stored.flatMap((document): TraceRead[] => {
      const read = storedRead(document.read);
      return read ? [read] : [];
    });
    const files: DidRef[] = reads.filter((read) => read.kind === 'file');
    const outputs = kronos.decide(reads, { rseIds, parents: await parentsOfMany(context.readModels, files) });
    const ids = stored.map((document) => document._id);
    // The cause is the batch's content, not the job: a later job recording the same batch again appends nothing.
    const metadata = { ...asRoot('batch'), causationId: `${DAEMON}/batch/${contentDigest(ids)}` };
    const done = await recordReads(context.commands, withoutSkipped(outputs), metadata);
    await buffer.remove(ids);
    return { done, skipped: skippedOf(outputs) };
  },
});
