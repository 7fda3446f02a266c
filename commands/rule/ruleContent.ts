import { didKey, type DidRef, type LiveDid } from '../../domain/did/did.ts';
import type { RuleDidFacts } from '../../domain/rule/ruleCreation.ts';
import type { PlacementDataset, PlacementFile, RuleContent } from '../../domain/rule/rulePlacement.ts';
import { DataIdentifierNotFound } from '../../domain/shared/errors.ts';
import { loadDid, loadFileReplicas } from '../did/didStreams.ts';
import type { CommandContext } from '../handleCommand.ts';

/**
 * What a rule needs to know of its DID before placing locks: its type, size and whether it is
 * closed, read from its stream; and, unless the rule will be injected later, every file below it
 * with the RSEs holding it. A dataset's files come from its own stream (authoritative, in memory);
 * a container's datasets from the content read model; where files are from the replica read
 * model, batched.
 */

export type RuleDid = Readonly<{ did: LiveDid; datasets: readonly (DidRef & { did: LiveDid })[] }>;

/** Loads the DID and, for a container, the datasets below it. DataIdentifierNotFound when it is gone. */
export const loadRuleDid = async (context: CommandContext, ref: DidRef): Promise<RuleDid> => {
  const state = await loadFileReplicas(context, ref.scope, ref.name);
  if (state.did.status !== 'Live')
    throw new DataIdentifierNotFound(`Data identifier '${ref.scope}:${ref.name}' not found`);
  const did = state.did;
  if (did.record.didType !== 'CONTAINER')
    return { did, datasets: did.record.didType === 'DATASET' ? [{ ...ref, did }] : [] };
  const datasets: (DidRef & { did: LiveDid })[] = [];
  for (const dataset of await context.ruleFacts.datasetsBelow(ref)) {
    const loaded = await loadDid(context, dataset.scope, dataset.name);
    if (loaded.status === 'Live') datasets.push({ ...dataset, did: loaded });
  }
  return { did, datasets };
};

const filesOf = (dataset: LiveDid) =>
  [...dataset.content.children.values()].filter((child) => child.didType === 'FILE');

/** The number of files below the DID and their bytes (a file shared by two datasets counts twice). */
export const sizeOf = (ruleDid: RuleDid): { length: number; bytes: number } => {
  const { did } = ruleDid;
  if (did.record.didType === 'FILE') return { length: 1, bytes: did.record.bytes ?? 0 };
  let length = 0;
  let bytes = 0;
  for (const dataset of ruleDid.datasets) {
    for (const file of filesOf(dataset.did)) {
      length += 1;
      bytes += file.bytes ?? 0;
    }
  }
  return { length, bytes };
};

/**
 * The DID's content with replicas, for placing locks. `lockedBy` gives, per file, the RSEs where
 * the rule already holds a lock; `datasetLockedOn` the same for dataset locks.
 */
export const loadRuleContent = async (
  context: CommandContext,
  ruleDid: RuleDid,
  held: Readonly<{
    lockedBy?: (file: DidRef) => readonly string[];
    datasetLockedOn?: (dataset: DidRef) => readonly string[];
    /** Only these files (`scope:name`) of the datasets, when given: those an attach brought. */
    onlyFiles?: ReadonlySet<string>;
  }> = {},
): Promise<RuleContent> => {
  const { did } = ruleDid;
  if (did.record.didType === 'FILE') {
    const state = await loadFileReplicas(context, did.record.scope, did.record.name);
    const replicas = Object.fromEntries(
      [...state.replicas].map(([rseId, replica]) => [rseId, { state: replica.state }]),
    );
    const file: PlacementFile = {
      scope: did.record.scope,
      name: did.record.name,
      bytes: did.record.bytes ?? 0,
      replicas,
      lockedBy: held.lockedBy?.(did.record) ?? [],
    };
    return { kind: 'file', file };
  }
  const only = held.onlyFiles;
  const chosenFiles = (dataset: LiveDid) =>
    only ? filesOf(dataset).filter((file) => only.has(didKey(file.scope, file.name))) : filesOf(dataset);
  const allFiles = ruleDid.datasets.flatMap((dataset) => chosenFiles(dataset.did));
  const replicas = await context.ruleFacts.replicasOf(allFiles);
  const datasets: PlacementDataset[] = ruleDid.datasets.map((dataset) => ({
    scope: dataset.scope,
    name: dataset.name,
    closed: dataset.did.record.isOpen === false,
    lockedOn: held.datasetLockedOn?.(dataset) ?? [],
    files: chosenFiles(dataset.did).map((file) => ({
      scope: file.scope,
      name: file.name,
      bytes: file.bytes ?? 0,
      replicas: replicas.get(didKey(file.scope, file.name)) ?? {},
      lockedBy: held.lockedBy?.(file) ?? [],
    })),
  }));
  return { kind: 'collection', datasets };
};

/** The facts `planRules` takes for one DID; `content` only when the rule is to be applied now. */
export const ruleDidFacts = (ruleDid: RuleDid, content: RuleContent | undefined): RuleDidFacts => {
  const { length, bytes } = sizeOf(ruleDid);
  const record = ruleDid.did.record;
  return {
    scope: record.scope,
    name: record.name,
    didType: record.didType,
    length,
    bytes,
    closed: record.didType === 'FILE' || record.isOpen === false,
    content,
  };
};

/**
 * Whether a rule's DID is closed (a file always is; a DID gone counts as open): the notifications
 * of CLOSE and PROGRESS rules wait for it (Rucio reads the DID's `open` when the rule turns OK).
 */
export const didClosedOf = async (context: CommandContext, did: DidRef): Promise<boolean> => {
  const state = await loadDid(context, did.scope, did.name);
  if (state.status !== 'Live') return false;
  return state.record.didType === 'FILE' || state.record.isOpen === false;
};
