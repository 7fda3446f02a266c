import { changeReplicaStates } from '../rule/ruleTransfers.ts';
import { didKey, type DidRef } from '../../domain/did/did.ts';
import { allowOnly } from '../../domain/permission/policy.ts';
import { REPLICA_PERMISSIONS } from '../../domain/permission/replicaPolicy.ts';
import { quarantineStreamName, type QuarantinedReplica } from '../../domain/quarantine/quarantine.ts';
import { quarantineDecider } from '../../domain/quarantine/quarantineDecider.ts';
import { OBSOLETE_TOMBSTONE, type ReplicaState } from '../../domain/replica/replica.ts';
import type { ReplicaCommand, ReplicaTarget } from '../../domain/replica/replicaStates.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import { AccessDenied, RSENotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import type { DidWriteOutcome } from '../did/didCreationCommands.ts';
import { loadFileReplicas, onDidStream } from '../did/didStreams.ts';
import { handleCommand, handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';

const activeRse = async (context: CommandContext, rse: string) => {
  const state = await loadRse(context, rse);
  if (state.status !== 'Active') throw rseNotFound(rse);
  return { rse: state.rse, rseId: state.id };
};

/**
 * Decides one command per replica, grouped by file so that one file named twice is decided on
 * its stream in order, and appends everything in one atomic step: one refused replica refuses all.
 */
const onReplicas = async <T extends DidRef>(
  context: CommandContext,
  items: readonly T[],
  command: (item: T, target: ReplicaTarget) => ReplicaCommand,
  rseOf: (item: T) => Promise<{ rse: string; rseId: string }>,
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const byFile = new Map<string, ReplicaCommand[]>();
  for (const item of items) {
    const key = didKey(item.scope, item.name);
    const next = command(item, { scope: item.scope, name: item.name, ...(await rseOf(item)) });
    byFile.set(key, [...(byFile.get(key) ?? []), next]);
  }
  const decisions = [...byFile.values()].map((commands) =>
    onDidStream(commands[0]!.data.scope, commands[0]!.data.name, commands),
  );
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/** Rucio's `update_replicas_states` (admins): every change applies, or none. */
export const updateReplicaStates = async (
  context: CommandContext,
  data: { rse: string; files: readonly (DidRef & { state: ReplicaState })[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    REPLICA_PERMISSIONS.updateReplicasStates(caller),
    `Account ${caller.account} can not update file replicas state on ${data.rse}.`,
  );
  await activeRse(context, data.rse);
  // Rucio's update_replicas_states also tells the locks (successful_transfer / failed_transfer).
  return { position: (await changeReplicaStates(context, { rse: data.rse, files: data.files }, metadata)).position };
};

/**
 * Rucio's `set_tombstone` (admins) for several replicas: each becomes obsolete (epoch tombstone)
 * unless a rule lock holds it. Rucio commits replica by replica; here all or nothing.
 */
export const setTombstones = async (
  context: CommandContext,
  data: { replicas: readonly (DidRef & { rse: string })[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(REPLICA_PERMISSIONS.setTombstone(caller), `Account ${caller.account} can not set tombstones.`);
  return onReplicas(
    context,
    data.replicas,
    (_replica, target) => ({
      type: 'SetReplicaTombstone',
      data: { ...target, tombstone: OBSOLETE_TOMBSTONE },
      metadata,
    }),
    (replica) => activeRse(context, replica.rse),
    metadata,
  );
};

/**
 * `DELETE /replicas`: Rucio's policy lets no account delete replicas through the API (only its
 * reaper does), so the answer is always AccessDenied with Rucio's message.
 */
export const refuseReplicaDeletion = async (
  context: CommandContext,
  data: { rse: string },
  metadata: CommandMetadata,
): Promise<never> => {
  const caller = await loadCaller(context, metadata.account);
  throw new AccessDenied(`Account ${caller.account} can not delete file replicas on ${data.rse}.`);
};

/**
 * Rucio's `quarantine_file_replicas` (admins): dark files of one RSE, named by RSE name or id.
 * Entries that are registered replicas there are skipped; that is read from the files' streams.
 */
export const quarantineReplicas = async (
  context: CommandContext,
  data: { rse: { name: string } | { id: string }; replicas: readonly QuarantinedReplica[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(REPLICA_PERMISSIONS.quarantine(caller), `Account ${caller.account} can not quarantine replicas.`);
  let rse: { rse: string; rseId: string };
  if ('name' in data.rse) rse = await activeRse(context, data.rse.name);
  else {
    const found = await context.replicaCatalogue.rseById(data.rse.id);
    if (!found) throw new RSENotFound(`RSE with id '${data.rse.id}' cannot be found`);
    rse = { rse: found.rse, rseId: found.id };
  }
  const registered = new Set<string>();
  for (const replica of data.replicas) {
    if (replica.scope === null || replica.name === null) continue;
    const state = await loadFileReplicas(context, replica.scope, replica.name);
    if (state.replicas.has(rse.rseId)) registered.add(didKey(replica.scope, replica.name));
  }
  const outcome = await handleCommand(context, quarantineDecider, quarantineStreamName(rse.rse), {
    type: 'QuarantineReplicas',
    data: { ...rse, replicas: data.replicas, registered },
    metadata,
  });
  return { position: outcome.position };
};
