import { didFromKey, didKey, type DidRef, type LiveDid } from '../../domain/did/did.ts';
import { ruleStreamName, type LiveRule, type RuleLock } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadDid, loadFileReplicas } from '../did/didStreams.ts';
import { handleCommand, handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { pendingRequestsOf, StepBuilder } from '../stepBuilder.ts';
import { didClosedOf, loadRuleContent, type RuleDid } from './ruleContent.ts';
import { loadRule } from './ruleDeletion.ts';
import { applyRule, heldBy } from './ruleInjection.ts';

/**
 * The judge-evaluator: after an attach, the rules on the collection and on every collection above
 * it lock the new files (Rucio's `__evaluate_did_attach`); after a detach, they release the files
 * no longer below their DID (`__evaluate_did_detach`). Facts about the graph come from the read
 * models, which the worker lets catch up with the attach or detach first.
 */

/** The rules on a DID and on all its ancestors, live ones only. */
export const rulesCovering = async (context: CommandContext, did: DidRef): Promise<LiveRule[]> => {
  const keys = [didKey(did.scope, did.name), ...(await context.didGraph.ancestors(did.scope, did.name))];
  const rules: LiveRule[] = [];
  for (const key of keys) {
    const { scope, name } = didFromKey(key);
    const state = await loadDid(context, scope, name);
    if (state.status !== 'Live') continue;
    for (const ruleId of state.rules.keys()) {
      const rule = await loadRule(context, ruleId);
      if (rule.status === 'Live') rules.push(rule);
    }
  }
  return rules;
};

/** The datasets an attach to `parent` of `children` brings files into, loaded from their streams. */
const affectedDatasets = async (
  context: CommandContext,
  parent: LiveDid,
  children: readonly DidRef[],
): Promise<(DidRef & { did: LiveDid })[]> => {
  if (parent.record.didType === 'DATASET')
    return [{ scope: parent.record.scope, name: parent.record.name, did: parent }];
  const datasets = new Map<string, DidRef>();
  for (const child of children) {
    const state = await loadDid(context, child.scope, child.name);
    if (state.status !== 'Live') continue;
    if (state.record.didType === 'DATASET') datasets.set(didKey(child.scope, child.name), child);
    if (state.record.didType === 'CONTAINER')
      for (const dataset of await context.ruleFacts.datasetsBelow(child))
        datasets.set(didKey(dataset.scope, dataset.name), dataset);
  }
  const loaded: (DidRef & { did: LiveDid })[] = [];
  for (const dataset of datasets.values()) {
    const state = await loadDid(context, dataset.scope, dataset.name);
    if (state.status === 'Live') loaded.push({ ...dataset, did: state });
  }
  return loaded;
};

/** Rules that wait (for approval, for the injector) or are suspended take no new locks. */
export const EVALUATED_STATES: ReadonlySet<string> = new Set(['REPLICATING', 'OK', 'STUCK']);

export const evaluateAttach = async (
  context: CommandContext,
  data: { scope: string; name: string; children: readonly DidRef[] },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; rules: number; locks: number; stuck: string[] }> => {
  const parent = await loadDid(context, data.scope, data.name);
  if (parent.status !== 'Live') return { position: undefined, rules: 0, locks: 0, stuck: [] };
  const rules = (await rulesCovering(context, data)).filter((rule) => EVALUATED_STATES.has(rule.state));
  if (rules.length === 0) return { position: undefined, rules: 0, locks: 0, stuck: [] };
  const datasets = await affectedDatasets(context, parent, data.children);
  // Files attached to a dataset are the only new ones there (Rucio evaluates only the new content
  // rows): the dataset's other files are not placed again, so an attach costs what it brings.
  const onlyFiles =
    parent.record.didType === 'DATASET'
      ? new Set(data.children.map((child) => didKey(child.scope, child.name)))
      : undefined;
  let position: bigint | undefined;
  let locks = 0;
  const stuck: string[] = [];
  for (const rule of rules) {
    const ruleDid: RuleDid = { did: parent, datasets };
    const content = await loadRuleContent(context, ruleDid, { ...heldBy(rule), ...(onlyFiles ? { onlyFiles } : {}) });
    const causeMetadata = metadata.causationId
      ? { ...metadata, causationId: `${metadata.causationId}/${rule.record.id}` }
      : metadata;
    try {
      const applied = await applyRule(
        context,
        rule,
        content,
        { kind: 'attach', detail: `${data.scope}:${data.name}` },
        causeMetadata,
      );
      position = applied.position ?? position;
      locks += applied.locks;
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      // The attach happened; the rule cannot follow it, so it is STUCK with the reason (Rucio does the same).
      const outcome = await handleCommand(context, ruleDecider, ruleStreamName(rule.record.id), {
        type: 'SetRuleState',
        data: { ruleId: rule.record.id, state: 'STUCK', error: `${error.exceptionClass}: ${error.message}` },
        metadata: causeMetadata,
      });
      position = outcome.position ?? position;
      stuck.push(rule.record.id);
    }
  }
  return { position, rules: rules.length, locks, stuck };
};

/** Whether a file is still below `ancestor` through any of its parents. */
const stillBelow = async (context: CommandContext, file: DidRef, ancestor: DidRef): Promise<boolean> => {
  const target = didKey(ancestor.scope, ancestor.name);
  for (const parent of await context.didGraph.parents(file.scope, file.name)) {
    if (didKey(parent.scope, parent.name) === target) return true;
    if ((await context.didGraph.ancestors(parent.scope, parent.name)).has(target)) return true;
  }
  return false;
};

/** Files below a detached child (the child itself for a file), read from the streams and the graph. */
const filesOfDetached = async (context: CommandContext, child: DidRef): Promise<DidRef[]> => {
  const state = await loadDid(context, child.scope, child.name);
  if (state.status !== 'Live') return [];
  if (state.record.didType === 'FILE') return [child];
  if (state.record.didType === 'DATASET')
    return [...state.content.children.values()].map(({ scope, name }) => ({ scope, name }));
  const files: DidRef[] = [];
  for (const dataset of await context.ruleFacts.datasetsBelow(child)) {
    const loaded = await loadDid(context, dataset.scope, dataset.name);
    if (loaded.status === 'Live')
      files.push(...[...loaded.content.children.values()].map(({ scope, name }) => ({ scope, name })));
  }
  return files;
};

export const evaluateDetach = async (
  context: CommandContext,
  data: { scope: string; name: string; children: readonly DidRef[] },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; rules: number; locks: number }> => {
  const rules = await rulesCovering(context, data);
  if (rules.length === 0) return { position: undefined, rules: 0, locks: 0 };
  const candidates: DidRef[] = [];
  for (const child of data.children) candidates.push(...(await filesOfDetached(context, child)));
  const detachedDatasets = new Set(data.children.map((child) => didKey(child.scope, child.name)));
  let position: bigint | undefined;
  let released = 0;
  for (const rule of rules) {
    const ruleDid = { scope: rule.record.scope, name: rule.record.name };
    const gone: RuleLock[] = [];
    for (const file of candidates) {
      const locks = [...rule.locks.values()].filter((lock) => lock.scope === file.scope && lock.name === file.name);
      if (locks.length === 0 || (await stillBelow(context, file, ruleDid))) continue;
      gone.push(...locks);
    }
    const datasetLocks = [...rule.datasetLocks.values()].filter((lock) =>
      detachedDatasets.has(didKey(lock.scope, lock.name)),
    );
    if (gone.length === 0 && datasetLocks.length === 0) continue;
    const causeMetadata = metadata.causationId
      ? { ...metadata, causationId: `${metadata.causationId}/${rule.record.id}` }
      : metadata;
    position =
      (await releaseLocks(
        context,
        rule,
        gone,
        datasetLocks,
        { kind: 'detach', detail: `${data.scope}:${data.name}` },
        causeMetadata,
      )) ?? position;
    released += gone.length;
  }
  return { position, rules: rules.length, locks: released };
};

/** Removes some of a rule's locks in one step: files unlocked, orphaned transfers cancelled, the rule told. */
export const releaseLocks = async (
  context: CommandContext,
  rule: LiveRule,
  locks: readonly RuleLock[],
  datasetLocks: readonly (DidRef & { rseId: string })[],
  cause: { kind: 'detach' | 'repair' | 'recovery'; detail?: string },
  metadata: CommandMetadata,
): Promise<bigint | undefined> => {
  const step = new StepBuilder(metadata);
  const pending = await pendingRequestsOf((scope, name) => loadFileReplicas(context, scope, name), locks);
  step.unlockFiles(
    rule.record.id,
    locks,
    rule.record.purgeReplicas,
    pending,
    `no lock waits for it after a ${cause.kind}`,
  );
  const didClosed = await didClosedOf(context, rule.record);
  step.onRule(rule.record.id, () => [
    {
      type: 'RemoveLocks',
      data: {
        ruleId: rule.record.id,
        locks: locks.map(({ scope, name, rseId }) => ({ scope, name, rseId })),
        datasetLocks: datasetLocks.map(({ scope, name, rseId }) => ({ scope, name, rseId })),
        cause,
        didClosed,
      },
      metadata,
    },
  ]);
  return lastPosition(await handleCommands(context, step.decisions(), { metadata }));
};
