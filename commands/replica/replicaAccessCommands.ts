import { didStreamName } from '../../domain/did/did.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaAccessCommand } from '../../domain/replica/replicaAccess.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import type { RecordDatasetReads, RecordReplicaReads } from '../../domain/trace/kronos.ts';
import { handleCommands, StepPlan, type CommandContext } from '../handleCommand.ts';

/** Streams decided together: one append (one transaction on SQLite) for this many files and datasets. */
const STREAMS_PER_STEP = 500;

/**
 * Records a batch of reads kronos gathered: on each file's stream its replicas' reads, on each
 * dataset's stream its own. Streams are decided a few hundred at a time; nothing ties them
 * together but the batch. The metadata's cause names the batch, so a batch recorded again
 * derives the same event ids and appends nothing twice. Returns how many streams changed.
 */
export const recordReads = async (
  context: CommandContext,
  reads: readonly (RecordReplicaReads | RecordDatasetReads)[],
  metadata: CommandMetadata,
): Promise<number> => {
  const plan = new StepPlan();
  for (const read of reads) {
    const command: ReplicaAccessCommand =
      read.type === 'RecordReplicaReads'
        ? { type: 'RecordReplicaAccess', data: read.data, metadata }
        : { type: 'RecordDatasetAccess', data: read.data, metadata };
    plan.add(didStreamDecider, didStreamName(read.data.scope, read.data.name), command);
  }
  const decisions = plan.decisions();
  let changed = 0;
  for (let start = 0; start < decisions.length; start += STREAMS_PER_STEP) {
    const outcomes = await handleCommands(context, decisions.slice(start, start + STREAMS_PER_STEP), { metadata });
    changed += outcomes.filter((outcome) => outcome.events.length > 0).length;
  }
  return changed;
};
