import { didKey, didStreamName, type DidRef } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { StorageDeletion } from '../../domain/replica/replica.ts';
import { beingDeleted, undeletableBecause } from '../../domain/replica/replicaDeletion.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  type CommandContext,
  type DecidedStates,
  type DecisionOf,
} from '../handleCommand.ts';

/**
 * The reaper's two steps on the catalogue around the deletion of files from storage (Rucio's
 * `list_and_mark_unlocked_replicas` and `delete_replicas`), each one atomic step over a chunk of
 * replicas of one RSE. Between them the worker deletes the files of the replicas the first step
 * marked, and only those.
 */

export type DeletionTarget = DidRef & Readonly<{ rse: string; rseId: string; reason: string }>;

/**
 * Marks each replica BEING_DELETED on its file's stream, where a lock refuses it, in one step.
 * Returns the replicas that are BEING_DELETED and unlocked afterwards (marked now, or by a
 * deletion a crash interrupted), whose files may go; the others with the reason the stream gave.
 */
export const startReplicaDeletions = async (
  context: CommandContext,
  data: Readonly<{ replicas: readonly DeletionTarget[]; obsoleteOnly: boolean; daemon: string }>,
  metadata: CommandMetadata,
): Promise<{
  position: bigint | undefined;
  marked: DeletionTarget[];
  refused: { target: DeletionTarget; reason: string }[];
}> => {
  const byFile = groupByFile(data.replicas);
  const decisions = [...byFile.values()].map((targets) =>
    onStream(
      didStreamDecider,
      didStreamName(targets[0]!.scope, targets[0]!.name),
      targets.map((target): DidStreamCommand => ({
        type: 'StartReplicaDeletion',
        data: { ...target, obsoleteOnly: data.obsoleteOnly, daemon: data.daemon },
        metadata,
      })),
    ),
  );
  const outcomes = await handleCommands(context, decisions, { metadata });
  const marked: DeletionTarget[] = [];
  const refused: { target: DeletionTarget; reason: string }[] = [];
  const now = metadata.now.toISOString();
  [...byFile.values()].forEach((targets, index) => {
    const after = outcomes[index]!.newState;
    for (const target of targets) {
      if (beingDeleted(after, target.rseId)) marked.push(target);
      else
        refused.push({
          target,
          reason:
            undeletableBecause(after, target.rseId, now, data.obsoleteOnly) ??
            `it is ${after.replicas.get(target.rseId)?.state}`,
        });
    }
  });
  return { position: lastPosition(outcomes), marked, refused };
};

/** Whether the replica is still BEING_DELETED and unlocked on its stream now: its file may be deleted. */
export const stillBeingDeleted = async (context: CommandContext, target: DeletionTarget): Promise<boolean> =>
  beingDeleted(await loadFileReplicas(context, target.scope, target.name), target.rseId);

export type RecordedDeletion = DeletionTarget & Readonly<{ storage: StorageDeletion }>;

export type DeletionRecord = Readonly<{
  position: bigint | undefined;
  /** Replicas recorded deleted. */
  deleted: DeletionTarget[];
  /** Replicas a lock took back after their file was deleted: their transfer brings the file again. */
  retaken: DeletionTarget[];
  /** DIDs deleted by the cleanup: files gone with their last replica, collections emptied. */
  erased: DidRef[];
}>;

/**
 * Records the replicas deleted and cleans up after them, in one step (Rucio's `delete_replicas`
 * and `__cleanup_after_replica_deletion`): a file left without replicas (not LOST, without rules)
 * is deleted and detached from its parents; a collection that loses its last child that way is
 * detached from its own parents and deleted if closed (or `removeOpen`), and so on upwards.
 * Parents come from the content read model; the streams decide on what they hold.
 */
export const recordReplicaDeletions = async (
  context: CommandContext,
  data: Readonly<{ deletions: readonly RecordedDeletion[]; daemon: string; removeOpen: boolean }>,
  metadata: CommandMetadata,
): Promise<DeletionRecord> => {
  const byFile = groupByFile(data.deletions);
  const files = [...byFile.values()].map((deletions) => ({ scope: deletions[0]!.scope, name: deletions[0]!.name }));
  const levels = await collectionLevels(context, files);
  const reason = (deletions: readonly RecordedDeletion[]) =>
    `last replica deleted by the ${data.daemon} (${deletions[0]!.reason})`;

  // 1. The files: each replica recorded deleted, and the file deleted if none is left.
  const decisions: DecisionOf<typeof didStreamDecider>[] = [...byFile.values()].map((deletions) => {
    const { scope, name } = deletions[0]!;
    return onStream(didStreamDecider, didStreamName(scope, name), [
      ...deletions.map((deletion): DidStreamCommand => ({
        type: 'RecordReplicaDeletion',
        data: {
          scope,
          name,
          rse: deletion.rse,
          rseId: deletion.rseId,
          storage: deletion.storage,
          daemon: data.daemon,
          reason: deletion.reason,
        },
        metadata,
      })),
      { type: 'EraseFileWithoutReplicas', data: { scope, name, reason: reason(deletions) }, metadata },
    ]);
  });

  // 2. The collections above, lowest first: each drops the children this step deleted or emptied.
  const cleanupReason = `emptied by the ${data.daemon}'s cleanup`;
  const touched = new Set<string>();
  const emptied = (decided: DecidedStates, child: DidRef): boolean => {
    const state = decided.stateOf(didStreamDecider, didStreamName(child.scope, child.name));
    if (!state) return false;
    if (state.did.status === 'Erased') return true;
    return (
      state.did.status === 'Live' &&
      state.did.record.didType !== 'FILE' &&
      state.did.content.children.size === 0 &&
      touched.has(didKey(child.scope, child.name))
    );
  };
  for (const level of levels) {
    for (const { collection, children } of level) {
      const key = didKey(collection.scope, collection.name);
      decisions.push(
        onStream(didStreamDecider, didStreamName(collection.scope, collection.name), (decided): DidStreamCommand[] => {
          const gone = children.filter((child) => emptied(decided, child));
          if (gone.length === 0) {
            touched.delete(key);
            return [];
          }
          touched.add(key);
          return [
            {
              type: 'RemoveDeletedChildren',
              data: { ...collection, children: gone, removeOpen: data.removeOpen, reason: cleanupReason },
              metadata,
            },
          ];
        }),
      );
    }
  }
  const outcomes = await handleCommands(context, decisions, { metadata });

  const deleted: DeletionTarget[] = [];
  const retaken: DeletionTarget[] = [];
  const erased: DidRef[] = [];
  [...byFile.values()].forEach((deletions, index) => {
    const outcome = outcomes[index]!;
    for (const deletion of deletions) {
      const target: DeletionTarget = {
        scope: deletion.scope,
        name: deletion.name,
        rse: deletion.rse,
        rseId: deletion.rseId,
        reason: deletion.reason,
      };
      // A file erased with its last replicas carries their deletions in its DidErased.
      const deletedHere = outcome.events.some(
        (event) =>
          (event.type === 'ReplicaDeleted' && event.data.rseId === deletion.rseId) ||
          (event.type === 'DidErased' &&
            (event.data.replicasDeleted ?? []).some((replica) => replica.rseId === deletion.rseId)),
      );
      if (deletedHere) deleted.push(target);
      else if (outcome.newState.replicas.has(deletion.rseId)) retaken.push(target);
    }
  });
  for (const outcome of outcomes) {
    for (const event of outcome.events)
      if (event.type === 'DidErased') erased.push({ scope: event.data.scope, name: event.data.name });
  }
  return { position: lastPosition(outcomes), deleted, retaken, erased };
};

const groupByFile = <T extends DidRef>(items: readonly T[]): Map<string, T[]> => {
  const byFile = new Map<string, T[]>();
  for (const item of items) {
    const key = didKey(item.scope, item.name);
    byFile.set(key, [...(byFile.get(key) ?? []), item]);
  }
  return byFile;
};

type Level = { collection: DidRef; children: DidRef[] }[];

/**
 * The collections above the files, with the children of each that the cleanup may remove, in
 * levels: a collection comes after every collection below it that is in the list (longest path
 * from the files), so each is decided after what it may lose.
 */
const collectionLevels = async (context: CommandContext, files: readonly DidRef[]): Promise<Level[]> => {
  const childrenOf = new Map<string, { collection: DidRef; children: Map<string, DidRef> }>();
  const depth = new Map<string, number>();
  let frontier: { did: DidRef; depth: number }[] = files.map((did) => ({ did, depth: 0 }));
  // A DID graph has no cycles; the bound only guards against a corrupt read model.
  for (let round = 0; frontier.length > 0 && round < 64; round += 1) {
    const parents = await context.didGraph.parentsOfMany(frontier.map((entry) => entry.did));
    const next = new Map<string, { did: DidRef; depth: number }>();
    for (const { did, depth: childDepth } of frontier) {
      for (const parent of parents.get(didKey(did.scope, did.name)) ?? []) {
        const key = didKey(parent.scope, parent.name);
        const entry = childrenOf.get(key) ?? { collection: parent, children: new Map() };
        entry.children.set(didKey(did.scope, did.name), did);
        childrenOf.set(key, entry);
        if ((depth.get(key) ?? 0) < childDepth + 1) {
          depth.set(key, childDepth + 1);
          next.set(key, { did: parent, depth: childDepth + 1 });
        }
      }
    }
    frontier = [...next.values()];
  }
  const levels: Level[] = [];
  for (const [key, { collection, children }] of childrenOf) {
    const level = depth.get(key)! - 1;
    (levels[level] ??= []).push({ collection, children: [...children.values()] });
  }
  return levels.filter((level) => level !== undefined);
};
