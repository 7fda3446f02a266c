import { didStreamName } from '../../domain/did/did.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { ExpireRule, ExtendEndOfLife } from '../../domain/lifetimeException/atropos.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { handleCommand, loadAggregate, type CommandContext } from '../handleCommand.ts';
import { updateRule } from '../rule/ruleUpdates.ts';

/**
 * What atropos does to rules past their end of life, through the rule commands (as root): an
 * approved exception moves a rule's `eol_at`; otherwise the rule gets its short lifetime (with
 * purging and unlocking as configured) and its DID the `eol_at` metadata Rucio sets.
 */

const causedBy = (metadata: CommandMetadata, item: string): CommandMetadata =>
  metadata.causationId ? { ...metadata, causationId: `${metadata.causationId}/${item}` } : metadata;

/** The rule's end of life moves to the exception's end; a rule gone meanwhile is left alone. */
export const extendEndOfLife = async (
  context: CommandContext,
  data: ExtendEndOfLife['data'],
  metadata: CommandMetadata,
) => {
  const rule = await loadAggregate(context, ruleDecider, ruleStreamName(data.ruleId));
  if (rule.status !== 'Live') return { position: undefined, done: false };
  const outcome = await handleCommand(context, ruleDecider, ruleStreamName(data.ruleId), {
    type: 'UpdateRuleOptions',
    data: { ruleId: data.ruleId, changes: { eolAt: data.eolAt } },
    metadata,
  });
  return { position: outcome.position, done: true };
};

/** The rule expires `lifetime` seconds from now (the judge-cleaner then deletes it). */
export const expireAtEndOfLife = async (
  context: CommandContext,
  data: ExpireRule['data'],
  metadata: CommandMetadata,
) => {
  const rule = await loadAggregate(context, ruleDecider, ruleStreamName(data.ruleId));
  if (rule.status !== 'Live') return { position: undefined, done: false };
  const update = {
    lifetime: data.lifetime,
    ...(data.purgeReplicas ? { purgeReplicas: true } : {}),
    ...(data.unlock ? { locked: false } : {}),
  };
  let { position } = await updateRule(context, { ruleId: data.ruleId, update }, causedBy(metadata, 'rule'));
  const outcome = await handleCommand(context, didStreamDecider, didStreamName(data.scope, data.name), {
    type: 'CopyDidColumns',
    data: { scope: data.scope, name: data.name, columns: { eol_at: data.eolAt } },
    metadata: causedBy(metadata, 'did'),
  });
  position = outcome.position ?? position;
  return { position, done: true };
};
