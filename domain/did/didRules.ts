import { DataIdentifierNotFound } from '../shared/errors.ts';
import { DuplicateRule } from '../rule/ruleErrors.ts';
import type { Command } from '../shared/event.ts';
import type { Did, DidEvent, DidRule } from './did.ts';

/**
 * The replication rules a DID carries. A rule is attached in the same step that creates it, so the
 * duplicate check (one rule per DID, account, expression and copies: Rucio's unique index) and a
 * concurrent creation cannot both pass.
 */

export type AttachRule = Command<'AttachRule', { scope: string; name: string; ruleId: string; rule: DidRule }>;
export type ChangeDidRule = Command<'ChangeDidRule', { scope: string; name: string; ruleId: string; rule: DidRule }>;
export type DetachRule = Command<'DetachRule', { scope: string; name: string; ruleId: string }>;

export type DidRuleCommand = AttachRule | ChangeDidRule | DetachRule;

const sameRule = (a: DidRule, b: DidRule): boolean =>
  a.account === b.account && a.rseExpression === b.rseExpression && a.copies === b.copies;

export const attachRule = ({ data }: AttachRule, state: Did): DidEvent[] => {
  if (state.status !== 'Live')
    throw new DataIdentifierNotFound(`Data identifier '${data.scope}:${data.name}' not found`);
  if (state.rules.has(data.ruleId)) return [];
  for (const rule of state.rules.values()) {
    if (sameRule(rule, data.rule)) {
      throw new DuplicateRule(
        `A duplicate rule for this account, did, rse_expression, copies already exists: ${data.rule.account}, ${data.scope}:${data.name}, ${data.rule.rseExpression}, ${data.rule.copies}`,
      );
    }
  }
  return [
    { type: 'DidRuleAttached', data: { scope: data.scope, name: data.name, ruleId: data.ruleId, rule: data.rule } },
  ];
};

/** A change of owner may make the rule a duplicate of another on the DID (Rucio's unique index again). */
export const changeDidRule = ({ data }: ChangeDidRule, state: Did): DidEvent[] => {
  if (state.status !== 'Live' || !state.rules.has(data.ruleId)) return [];
  const current = state.rules.get(data.ruleId)!;
  if (current.account === data.rule.account && current.locked === data.rule.locked && sameRule(current, data.rule))
    return [];
  for (const [ruleId, rule] of state.rules) {
    if (ruleId !== data.ruleId && sameRule(rule, data.rule))
      throw new DuplicateRule(`A duplicate rule for this account, did, rse_expression, copies already exists`);
  }
  return [
    { type: 'DidRuleChanged', data: { scope: data.scope, name: data.name, ruleId: data.ruleId, rule: data.rule } },
  ];
};

/** Detaching a rule the DID does not carry (or a DID already gone) changes nothing. */
export const detachRule = ({ data }: DetachRule, state: Did): DidEvent[] => {
  if (state.status !== 'Live' || !state.rules.has(data.ruleId)) return [];
  return [{ type: 'DidRuleDetached', data: { scope: data.scope, name: data.name, ruleId: data.ruleId } }];
};
