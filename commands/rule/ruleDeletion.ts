import { didStreamName } from '../../domain/did/did.ts';
import { allowOnly, type Caller } from '../../domain/permission/policy.ts';
import { RULE_PERMISSIONS } from '../../domain/permission/rulePolicy.ts';
import { didStreamDecider } from '../../domain/replica/didStreamDecider.ts';
import { requestStreamName } from '../../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { ruleStreamName, type LiveRule, type RuleCause } from '../../domain/rule/rule.ts';
import { requireLive, ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import { handleCommand, handleCommands, lastPosition, loadAggregate, onStream, type AnyStreamDecision, type CommandContext } from '../handleCommand.ts';

export const loadRule = (context: CommandContext, ruleId: string) => loadAggregate(context, ruleDecider, ruleStreamName(ruleId));

export const loadLiveRule = async (context: CommandContext, ruleId: string): Promise<LiveRule> => requireLive(await loadRule(context, ruleId), ruleId);

export const requireRulePermission = (caller: Caller, allowed: boolean, what: string): void =>
  allowOnly(allowed, `Account ${caller.account} can not ${what}`);

/**
 * `DELETE /rules/{id}`: as in Rucio, the API only lets the rule expire within the hour (keeping an
 * earlier expiry), optionally changing `purge_replicas`; the cleaner deletes it then. Locked rules
 * and rules with a child are refused.
 */
export const requestRuleDeletion = async (context: CommandContext, data: { ruleId: string; purgeReplicas: boolean | null }, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.deleteRule(caller), `delete this replication rule`);
  return handleCommand(context, ruleDecider, ruleStreamName(data.ruleId), { type: 'RequestRuleDeletion', data, metadata });
};

/**
 * Deletes a rule now (the cleaner, a denial, a replacement), in one step: every lock removed from
 * its file's stream with the tombstone logic of lock removal, the transfers no lock waits for any
 * more cancelled, the rule detached from its DID, and the rule deleted with its locks. Returns
 * nothing to do when the rule is already gone.
 */
export const deleteRuleNow = async (
  context: CommandContext,
  data: { ruleId: string; purgeReplicas: boolean | null; cause: RuleCause; ignoreLock: boolean; deleteParent: boolean },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined }> => {
  const state = await loadRule(context, data.ruleId);
  if (state.status !== 'Live') return { position: undefined };
  const rule = state;
  const purge = data.purgeReplicas ?? rule.record.purgeReplicas;
  const decisions: AnyStreamDecision[] = [];
  const byFile = new Map<string, { scope: string; name: string; rseIds: string[]; rses: string[] }>();
  for (const lock of rule.locks.values()) {
    const key = didStreamName(lock.scope, lock.name);
    const entry = byFile.get(key) ?? { scope: lock.scope, name: lock.name, rseIds: [], rses: [] };
    entry.rseIds.push(lock.rseId);
    entry.rses.push(lock.rse);
    byFile.set(key, entry);
  }
  // The DID's stream may also be a file's (a rule on a file): its commands are decided together.
  const didStream = didStreamName(rule.record.scope, rule.record.name);
  const detach = { type: 'DetachRule', data: { scope: rule.record.scope, name: rule.record.name, ruleId: rule.record.id }, metadata } as const;
  if (!byFile.has(didStream)) decisions.push(onStream(didStreamDecider, didStream, detach));
  const pending: { requestId: string; scope: string; name: string; rseId: string }[] = [];
  for (const [streamName, file] of byFile) {
    const before = await loadFileReplicas(context, file.scope, file.name);
    for (const rseId of file.rseIds) {
      const requestId = before.replicas.get(rseId)?.pendingRequest;
      if (requestId) pending.push({ requestId, scope: file.scope, name: file.name, rseId });
    }
    const unlocks = file.rseIds.map((rseId, index) => ({
      type: 'UnlockReplica' as const,
      data: { scope: file.scope, name: file.name, rse: file.rses[index]!, rseId, ruleId: rule.record.id, purge },
      metadata,
    }));
    decisions.push(onStream(didStreamDecider, streamName, streamName === didStream ? [...unlocks, detach] : unlocks));
  }
  // A transfer is cancelled only if the file's decision let it go (no other lock waits for it).
  for (const { requestId, scope, name, rseId } of pending) {
    decisions.push(
      onStream(requestDecider, requestStreamName(requestId), (decided): RequestCommand[] => {
        const file = decided.stateOf(didStreamDecider, didStreamName(scope, name));
        if (file?.replicas.get(rseId)?.pendingRequest === requestId) return [];
        return [{ type: 'CancelRequest', data: { requestId, reason: `rule ${rule.record.id} deleted` }, metadata }];
      }),
    );
  }
  decisions.push(
    onStream(ruleDecider, ruleStreamName(rule.record.id), {
      type: 'DeleteRule',
      data: { ruleId: rule.record.id, purgeReplicas: purge, cause: data.cause, ignoreLock: data.ignoreLock, deleteParent: data.deleteParent },
      metadata,
    }),
  );
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};
