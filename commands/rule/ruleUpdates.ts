import { didStreamName } from '../../domain/did/did.ts';
import { RULE_PERMISSIONS } from '../../domain/permission/rulePolicy.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { ruleStreamName, type LiveRule } from '../../domain/rule/rule.ts';
import { checkSourceExpression } from '../../domain/rule/ruleCreation.ts';
import { ruleDecider, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { parseFilterDate } from '../../domain/shared/dates.ts';
import { AccountNotFound, InputValidationError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  type AnyStreamDecision,
  type CommandContext,
} from '../handleCommand.ts';
import { loadLiveRule, loadRule, requireRulePermission } from './ruleDeletion.ts';
import { repairRule } from './ruleRepair.ts';

/** The options `update_rule` takes (Rucio's list); anything else is an InputValidationError. */
export const RULE_UPDATE_OPTIONS = [
  'comment',
  'locked',
  'lifetime',
  'account',
  'state',
  'activity',
  'source_replica_expression',
  'cancel_requests',
  'priority',
  'child_rule_id',
  'eol_at',
  'meta',
  'purge_replicas',
  'boost_rule',
] as const;

/** The options of one update, typed by the API (which checks their types and the known keys). */
export type RuleUpdate = Readonly<{
  comment?: string | null;
  locked?: boolean;
  /** Seconds from now; null clears the expiry. */
  lifetime?: number | null;
  account?: string;
  state?: string;
  activity?: string;
  sourceReplicaExpression?: string | null;
  cancelRequests?: boolean;
  priority?: number;
  childRuleId?: string | null;
  eolAt?: string | null;
  meta?: Readonly<Record<string, unknown>> | null;
  purgeReplicas?: boolean;
  boostRule?: boolean;
}>;

/**
 * `update_rule` (admins): plain options are set on the rule; the owner and the lock also change
 * what the DID keeps of the rule (a new owner may make it a duplicate); `state` STUCK or SUSPENDED
 * hands the rule to the repairer or stops it; a child rule must be on the same DID and is recorded
 * only while it is not OK yet. Everything of one call is one atomic step.
 */
export const updateRule = async (
  context: CommandContext,
  data: { ruleId: string; update: RuleUpdate },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.updateRule(caller), 'update this replication rule.');
  const rule = await loadLiveRule(context, data.ruleId);
  const { update } = data;
  const changes: Record<string, unknown> = {};
  if (update.comment !== undefined) changes.comments = update.comment;
  if (update.locked !== undefined) changes.locked = update.locked;
  if (update.lifetime !== undefined) {
    changes.expiresAt =
      update.lifetime === null ? null : new Date(metadata.now.getTime() + update.lifetime * 1000).toISOString();
  }
  if (update.account !== undefined) {
    const owner = await loadAccount(context, update.account);
    if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ${update.account} does not exist`);
    changes.account = update.account;
  }
  if (update.activity !== undefined) changes.activity = update.activity;
  if (update.sourceReplicaExpression !== undefined) {
    checkSourceExpression(update.sourceReplicaExpression, await context.ruleFacts.rses());
    changes.sourceReplicaExpression = update.sourceReplicaExpression;
  }
  if (update.priority !== undefined) changes.priority = update.priority;
  if (update.eolAt !== undefined) changes.eolAt = update.eolAt === null ? null : eolOf(update.eolAt);
  if (update.meta !== undefined) changes.meta = update.meta;
  if (update.purgeReplicas !== undefined) changes.purgeReplicas = update.purgeReplicas;
  if (update.childRuleId !== undefined) Object.assign(changes, await childChange(context, rule, update.childRuleId));

  const ruleCommands: RuleCommand[] = [];
  if (Object.keys(changes).length > 0) {
    ruleCommands.push({
      type: 'UpdateRuleOptions',
      data: { ruleId: rule.record.id, changes },
      metadata,
    });
  }
  if (update.state !== undefined)
    ruleCommands.push({ type: 'SetRuleState', data: { ruleId: rule.record.id, state: update.state }, metadata });

  const decisions: AnyStreamDecision[] = [];
  const locked = update.locked ?? rule.record.locked;
  const account = update.account ?? rule.record.account;
  if (locked !== rule.record.locked || account !== rule.record.account) {
    const didCommand: DidStreamCommand = {
      type: 'ChangeDidRule',
      data: {
        scope: rule.record.scope,
        name: rule.record.name,
        ruleId: rule.record.id,
        rule: { account, rseExpression: rule.record.rseExpression, copies: rule.record.copies, locked },
      },
      metadata,
    };
    decisions.push(onStream(didStreamDecider, didStreamName(rule.record.scope, rule.record.name), didCommand));
  }
  if (ruleCommands.length > 0) decisions.push(onStream(ruleDecider, ruleStreamName(rule.record.id), ruleCommands));
  let position =
    decisions.length > 0 ? lastPosition(await handleCommands(context, decisions, { metadata })) : undefined;
  // Rucio's boost moves the rule back in time so that its repairer takes it at once, back-off done.
  if (update.boostRule)
    position =
      (await repairRule(context, { ruleId: rule.record.id, ignoreBackoff: true }, metadata)).position ?? position;
  return { position };
};

/** An end of life as Rucio's date formats write it (UTC), kept as an ISO time; anything else is refused. */
const eolOf = (text: string): string => {
  const date = parseFilterDate(text);
  if (!date) throw new InputValidationError(`eol_at: '${text}' is not a date`);
  return date.toISOString();
};

/** A child rule: none dissolves the link (and clears the parent's expiry); another must share the DID. */
const childChange = async (
  context: CommandContext,
  rule: LiveRule,
  childRuleId: string | null,
): Promise<Record<string, unknown>> => {
  if (childRuleId === null) {
    if (rule.childRuleId === null)
      throw new InputValidationError(`Cannot detach child when no such relationship exists`);
    return { childRuleId: null, expiresAt: null };
  }
  if (childRuleId === rule.record.id) throw new InputValidationError('Attempted to add a child rule to itself');
  const child = await loadLiveRule(context, childRuleId);
  if (child.record.scope !== rule.record.scope || child.record.name !== rule.record.name) {
    throw new InputValidationError('Parent and child rule must be set on the same dataset.');
  }
  // Rucio records the link only while the child still has work to do.
  return child.state === 'OK' ? {} : { childRuleId };
};

/** `approve` in the options of an update: approval or denial (admins); denial deletes the rule. */
export const approveRule = async (
  context: CommandContext,
  data: { ruleId: string; approve: boolean; reason: string | null },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.approveRule(caller), 'approve/deny this replication rule.');
  const rule = await loadLiveRule(context, data.ruleId);
  const ruleStream = ruleStreamName(rule.record.id);
  if (data.approve) {
    return {
      position: lastPosition(
        await handleCommands(
          context,
          [onStream(ruleDecider, ruleStream, { type: 'ApproveRule', data: { ruleId: rule.record.id }, metadata })],
          { metadata },
        ),
      ),
    };
  }
  // A denied rule holds no lock; it leaves its DID in the same step, as a deleted one would.
  const { scope, name } = rule.record;
  const decisions: AnyStreamDecision[] = [
    onStream(ruleDecider, ruleStream, {
      type: 'DenyRule',
      data: { ruleId: rule.record.id, reason: data.reason },
      metadata,
    }),
    onStream(didStreamDecider, didStreamName(scope, name), (decided): DidStreamCommand[] =>
      decided.stateOf(ruleDecider, ruleStream)?.status === 'Deleted'
        ? [{ type: 'DetachRule', data: { scope, name, ruleId: rule.record.id }, metadata }]
        : [],
    ),
  ];
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/**
 * Rucio's `release_parent_rule`: a rule whose child is OK (or gone) loses the link, keeping the
 * expiry its move gave it, so that the cleaner deletes it in its turn. The cleaner's work.
 */
export const releaseParentRule = async (
  context: CommandContext,
  data: { ruleId: string },
  metadata: CommandMetadata,
) => {
  const state = await loadRule(context, data.ruleId);
  if (state.status !== 'Live' || state.childRuleId === null) return { position: undefined };
  const outcome = await handleCommands(
    context,
    [
      onStream(ruleDecider, ruleStreamName(data.ruleId), {
        type: 'UpdateRuleOptions',
        data: { ruleId: data.ruleId, changes: { childRuleId: null } },
        metadata,
      }),
    ],
    { metadata },
  );
  return { position: lastPosition(outcome) };
};
