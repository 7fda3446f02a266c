import { randomInt } from 'node:crypto';
import { didKey, didStreamName, NO_TOTALS, type DidRef } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/replica/didStreamDecider.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import { AccountNotFound, DataIdentifierNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import type { DidWriteOutcome } from './didCreation.ts';
import { loadNameSchema } from '../config/configCommands.ts';
import { loadAttachCandidates, loadDid, onDidStream, requireScope, scopeAccess } from './didStreams.ts';
import {
  handleCommand,
  handleCommands,
  lastPosition,
  onStream,
  type AnyStreamDecision,
  type CommandContext,
} from '../handleCommand.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { ruleDecider, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { loadRule, planRuleDeletion } from '../rule/ruleDeletion.ts';
import { RuleStep } from '../rule/ruleStep.ts';

const single = async (
  context: CommandContext,
  scope: string,
  name: string,
  command: DidStreamCommand,
): Promise<DidWriteOutcome> => {
  const outcome = await handleCommand(context, didStreamDecider, didStreamName(scope, name), command);
  return { position: outcome.position };
};

/** Closes or reopens a collection; closing a container records the totals of the datasets below it. */
export const setDidStatus = async (
  context: CommandContext,
  data: { scope: string; name: string; open: boolean },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.setStatus(await scopeAccess(context, caller, data.scope), data.open),
    `Account ${caller.account} can not set status on data identifier ${data.scope}:${data.name}.`,
  );
  const state = await loadDid(context, data.scope, data.name);
  const closingContainer = !data.open && state.status === 'Live' && state.record.didType === 'CONTAINER';
  const descendantTotals = closingContainer
    ? await context.didGraph.descendantDatasetTotals(data.scope, data.name)
    : NO_TOTALS;
  return single(context, data.scope, data.name, {
    type: 'SetDidStatus',
    data: { ...data, descendantTotals },
    metadata,
  });
};

export const followDid = async (
  context: CommandContext,
  data: { scope: string; name: string; account: string },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.follow(await scopeAccess(context, caller, data.scope), data.account),
    `Account ${caller.account} can not make account ${data.account} follow data identifiers.`,
  );
  const follower = await loadAccount(context, data.account);
  if (follower.status !== 'ACTIVE') throw new AccountNotFound(`Account ID '${data.account}' does not exist`);
  return single(context, data.scope, data.name, { type: 'FollowDid', data, metadata });
};

export const unfollowDid = async (
  context: CommandContext,
  data: { scope: string; name: string; account: string },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.follow(await scopeAccess(context, caller, data.scope), data.account),
    `Account ${caller.account} can not remove data identifiers from followed table.`,
  );
  return single(context, data.scope, data.name, { type: 'UnfollowDid', data, metadata });
};

/** Resurrects every listed DID, or none. */
export const resurrectDids = async (
  context: CommandContext,
  data: { dids: readonly DidRef[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(DID_PERMISSIONS.resurrect(caller), `Account ${caller.account} can not resurrect data identifiers.`);
  const distinct = new Map(data.dids.map((did) => [didKey(did.scope, did.name), did]));
  const decisions = [...distinct.values()].map((did) =>
    onDidStream(did.scope, did.name, { type: 'ResurrectDid', data: did, metadata }),
  );
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/**
 * A new open dataset holding `nbfiles` files drawn at random from the files below the input DID
 * (all of them when there are fewer). The draw happens here, not in the decider, which stays pure.
 */
export const createDidSample = async (
  context: CommandContext,
  data: { input: DidRef; output: DidRef; nbfiles: number },
  metadata: CommandMetadata,
  pick: (bound: number) => number = randomInt,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.writeCollection(await scopeAccess(context, caller, data.output.scope)),
    `Account ${caller.account} can not bulk add data identifier.`,
  );
  if ((await loadDid(context, data.input.scope, data.input.name)).status !== 'Live') {
    throw new DataIdentifierNotFound(`Data identifier '${data.input.scope}:${data.input.name}' not found`);
  }
  const files: DidRef[] = [];
  for await (const file of context.didGraph.files(data.input.scope, data.input.name)) files.push(file);
  // A partial Fisher-Yates shuffle: the first `nbfiles` places get a uniform random choice.
  const count = Math.max(0, Math.min(data.nbfiles, files.length));
  for (let index = 0; index < count; index += 1) {
    const other = index + pick(files.length - index);
    [files[index], files[other]] = [files[other]!, files[index]!];
  }
  const chosen = new Map(files.slice(0, count).map((file) => [didKey(file.scope, file.name), file]));
  const children = await loadAttachCandidates(context, [...chosen.values()]);
  await requireScope(context, data.output.scope);
  const nameSchema = await loadNameSchema(context);
  return single(context, data.output.scope, data.output.name, {
    type: 'CreateCollection',
    data: {
      ...data.output,
      didType: 'DATASET',
      account: caller.account,
      monotonic: false,
      lifetime: null,
      meta: {},
      conventions: new Map(),
      children,
      nameSchema,
    },
    metadata,
  });
};

/** How the undertaker deletes (Rucio's `undertaker` options); the defaults are Rucio's. */
export type ExpiryOptions = Readonly<{
  /** A rule with more locks is only expired within the hour, and the DID kept another day. */
  expireRulesLocksSize: number;
  /** The unlocked replicas of a collection's files get an obsolete tombstone. */
  purgeAllReplicas: boolean;
}>;

const RUCIO_EXPIRY_OPTIONS: ExpiryOptions = { expireRulesLocksSize: 10_000, purgeAllReplicas: false };

/** Rucio resets the lifetime of a DID whose large rule was only expired to one day. */
const POSTPONED_LIFETIME_SECONDS = 86_400;

/**
 * The undertaker's command for one expired DID (Rucio's `delete_dids` with `expire_rules`): its
 * rules are deleted with their locks (purging the replicas they leave), it is detached from every
 * parent, and it is deleted (a collection) or stripped of its expiry and JSON metadata (a file),
 * all in one atomic step; with `purgeAllReplicas` the unlocked replicas of a collection's files
 * become obsolete too. A locked rule protects the DID: nothing is done then. A rule holding more
 * than `expireRulesLocksSize` locks is only expired within the hour and the DID given another day
 * (`postponed` says why): its locks go with the cleaner, the DID at the undertaker's next pass.
 * Rucio leaves a DID with parents for its next cycle after detaching it; here everything happens
 * at once, the detach events reaching the judge all the same.
 */
export const deleteExpiredDid = async (
  context: CommandContext,
  data: DidRef,
  metadata: CommandMetadata,
  options: ExpiryOptions = RUCIO_EXPIRY_OPTIONS,
): Promise<DidWriteOutcome & { postponed?: string }> => {
  const state = await loadDid(context, data.scope, data.name);
  const step = new RuleStep(metadata);
  // With a locked rule the DID's own decision refuses; its rules are left as they are.
  if (state.status === 'Live' && ![...state.rules.values()].some((rule) => rule.locked)) {
    const rules = [];
    for (const ruleId of state.rules.keys()) {
      const rule = await loadRule(context, ruleId);
      if (rule.status === 'Live') rules.push(rule);
    }
    const large = rules.filter((rule) => rule.locks.size > options.expireRulesLocksSize);
    if (large.length > 0) {
      const decisions: AnyStreamDecision[] = large.map((rule) =>
        onStream(ruleDecider, ruleStreamName(rule.record.id), {
          type: 'RequestRuleDeletion',
          data: { ruleId: rule.record.id, purgeReplicas: true },
          metadata,
        } satisfies RuleCommand),
      );
      decisions.push(
        onDidStream(data.scope, data.name, {
          type: 'SetDidMetadata',
          data: { ...data, meta: { lifetime: POSTPONED_LIFETIME_SECONDS }, conventions: new Map() },
          metadata,
        }),
      );
      const position = lastPosition(await handleCommands(context, decisions, { metadata }));
      return {
        position,
        postponed: `rule ${large[0]!.record.id} holds ${large[0]!.locks.size} locks: expired within the hour, the DID kept another day`,
      };
    }
    for (const rule of rules) {
      await planRuleDeletion(
        context,
        step,
        rule,
        {
          purgeReplicas: true,
          cause: { kind: 'deletion', detail: 'the DID expired' },
          ignoreLock: false,
          deleteParent: true,
        },
        metadata,
      );
    }
    if (options.purgeAllReplicas && state.record.didType !== 'FILE') {
      for (const child of state.content.children.values()) {
        if (child.didType === 'FILE')
          step.onDid(child.scope, child.name, {
            type: 'PurgeUnlockedReplicas',
            data: { scope: child.scope, name: child.name },
            metadata,
          });
      }
    }
  }
  // The content read model may lag behind another writer: a parent that no longer holds the DID needs nothing.
  for (const parent of await context.didGraph.parents(data.scope, data.name)) {
    step.onDid(parent.scope, parent.name, {
      type: 'DetachDids',
      data: { ...parent, children: [data], ifAttached: true },
      metadata,
    });
  }
  step.onDid(data.scope, data.name, { type: 'EraseExpiredDid', data, metadata });
  return { position: lastPosition(await handleCommands(context, step.decisions(), { metadata })) };
};
