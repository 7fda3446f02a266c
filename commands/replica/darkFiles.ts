import {
  quarantineStreamName,
  type DarkFileOutcome,
  type QuarantinedReplica,
} from '../../domain/quarantine/quarantine.ts';
import { quarantineDecider } from '../../domain/quarantine/quarantineDecider.ts';
import type { CatalogueRse } from '../../domain/replica/replicaCatalogue.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';
import { resolvePfnOnRse } from './pfnResolution.ts';

/**
 * The dark reaper's facts and its record (Rucio's `list_quarantined_replicas` and
 * `delete_quarantined_replicas`). A quarantined path must never delete a registered replica's
 * file: entries naming a file that has a replica on the RSE, and paths that are a registered
 * replica's (the RSE's lfn2pfn algorithm reversed, or the stored path), are only dropped.
 */

/** Whether a quarantined entry is a registered replica after all: its file must stay. */
export const isRegisteredReplica = async (
  context: CommandContext,
  rse: CatalogueRse,
  entry: QuarantinedReplica,
  pfn: string,
): Promise<boolean> => {
  if (
    entry.scope !== null &&
    entry.name !== null &&
    (await loadFileReplicas(context, entry.scope, entry.name)).replicas.has(rse.id)
  )
    return true;
  return (await resolvePfnOnRse(context.replicaCatalogue, rse, pfn, { guess: false })) !== undefined;
};

/** The entries the dark reaper is done with leave the RSE's quarantine, with what became of each. */
export const removeQuarantinedReplicas = async (
  context: CommandContext,
  data: Readonly<{
    rse: string;
    rseId: string;
    replicas: readonly (QuarantinedReplica & { outcome: DarkFileOutcome })[];
    daemon: string;
  }>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; removed: number }> => {
  const outcome = await handleCommand(context, quarantineDecider, quarantineStreamName(data.rse), {
    type: 'RemoveQuarantinedReplicas',
    data,
    metadata,
  });
  const removed = outcome.events.reduce(
    (count, event) => count + (event.type === 'QuarantinedReplicasRemoved' ? event.data.replicas.length : 0),
    0,
  );
  return { position: outcome.position, removed };
};
