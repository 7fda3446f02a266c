import { allowOnly, type Caller } from '../../domain/permission/policy.ts';
import { RULE_PERMISSIONS } from '../../domain/permission/rulePolicy.ts';
import { ruleStreamName, type LiveRule, type RuleCause } from '../../domain/rule/rule.ts';
import { requireLive, ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import { handleCommand, handleCommands, lastPosition, loadAggregate, type CommandContext } from '../handleCommand.ts';
import { pendingRequestsOf, StepBuilder } from '../stepBuilder.ts';

export const loadRule = (context: CommandContext, ruleId: string) =>
  loadAggregate(context, ruleDecider, ruleStreamName(ruleId));

export const loadLiveRule = async (context: CommandContext, ruleId: string): Promise<LiveRule> =>
  requireLive(await loadRule(context, ruleId), ruleId);

export const requireRulePermission = (caller: Caller, allowed: boolean, what: string): void =>
  allowOnly(allowed, `Account ${caller.account} can not ${what}`);

/**
 * `DELETE /rules/{id}`: as in Rucio, the API only lets the rule expire within the hour (keeping an
 * earlier expiry), optionally changing `purge_replicas`; the cleaner deletes it then. Locked rules
 * and rules with a child are refused.
 */
export const requestRuleDeletion = async (
  context: CommandContext,
  data: { ruleId: string; purgeReplicas: boolean | null },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.deleteRule(caller), 'remove this replication rule.');
  return handleCommand(context, ruleDecider, ruleStreamName(data.ruleId), {
    type: 'RequestRuleDeletion',
    data,
    metadata,
  });
};

/**
 * Adds a rule's deletion to a step: every lock removed from its file's stream with the tombstone
 * logic of lock removal, the transfers no lock waits for any more cancelled, the rule detached
 * from its DID, and the rule deleted with its locks.
 */
export const planRuleDeletion = async (
  context: CommandContext,
  step: StepBuilder,
  rule: LiveRule,
  data: { purgeReplicas: boolean | null; cause: RuleCause; ignoreLock: boolean; deleteParent: boolean },
  metadata: CommandMetadata,
): Promise<void> => {
  const purge = data.purgeReplicas ?? rule.record.purgeReplicas;
  const locks = [...rule.locks.values()];
  const pending = await pendingRequestsOf((scope, name) => loadFileReplicas(context, scope, name), locks);
  step.unlockFiles(rule.record.id, locks, purge, pending, `rule ${rule.record.id} deleted`);
  step.onDid(rule.record.scope, rule.record.name, {
    type: 'DetachRule',
    data: { scope: rule.record.scope, name: rule.record.name, ruleId: rule.record.id },
    metadata,
  });
  step.onRule(rule.record.id, () => [
    {
      type: 'DeleteRule',
      data: {
        ruleId: rule.record.id,
        purgeReplicas: purge,
        cause: data.cause,
        ignoreLock: data.ignoreLock,
        deleteParent: data.deleteParent,
      },
      metadata,
    },
  ]);
};

/** Deletes a rule now (the cleaner, the undertaker, a replacement) in one atomic step; nothing when it is gone. */
export const deleteRuleNow = async (
  context: CommandContext,
  data: { ruleId: string; purgeReplicas: boolean | null; cause: RuleCause; ignoreLock: boolean; deleteParent: boolean },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined }> => {
  const state = await loadRule(context, data.ruleId);
  if (state.status !== 'Live') return { position: undefined };
  const step = new StepBuilder(metadata);
  await planRuleDeletion(context, step, state, data, metadata);
  return { position: lastPosition(await handleCommands(context, step.decisions(), { metadata })) };
};
