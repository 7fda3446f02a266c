import { didKey } from '../../domain/did/did.ts';
import { ruleStreamName, type RuleLock } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';
import { loadRuleContent, loadRuleDid } from './ruleContent.ts';
import { loadRule } from './ruleDeletion.ts';
import { EVALUATED_STATES, releaseLocks } from './ruleEvaluation.ts';
import { applyRule, heldBy } from './ruleInjection.ts';

/**
 * A rule's locks made to match its DID's content once more, after its locks were placed on the
 * content as the command read it: its creation, the end of its injection (issue 34). An attach
 * or detach decided between that read and the rule's own append is evaluated by the
 * judge-evaluator for the rules it can see, and the rule was not one of them yet: the files of
 * such an attach would stay without a lock, the files of such a detach with one, for ever. Run
 * once the read models show the rule, this locks every file below the DID without a lock of the
 * rule and releases the locks of files no longer below it; when both already match, it appends
 * nothing (so running it twice does nothing twice).
 */
export const reconcileRuleLocks = async (
  context: CommandContext,
  data: { ruleId: string },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; locked: number; released: number; stuck: boolean }> => {
  const nothing = { position: undefined, locked: 0, released: 0, stuck: false };
  // The rule first, then its content: a lock the rule holds was placed by an evaluation that saw
  // its file below the DID, and content read afterwards shows that file too (unless detached since).
  const rule = await loadRule(context, data.ruleId);
  if (rule.status !== 'Live' || !EVALUATED_STATES.has(rule.state)) return nothing;
  let ruleDid;
  try {
    ruleDid = await loadRuleDid(context, rule.record);
  } catch (error) {
    if (error instanceof RucioError) return nothing;
    throw error;
  }
  const below = new Set<string>();
  if (ruleDid.did.record.didType === 'FILE') below.add(didKey(rule.record.scope, rule.record.name));
  for (const dataset of ruleDid.datasets)
    for (const child of dataset.did.content.children.values())
      if (child.didType === 'FILE') below.add(didKey(child.scope, child.name));
  const lockedFiles = new Set([...rule.locks.values()].map((lock) => didKey(lock.scope, lock.name)));
  const unlocked = new Set([...below].filter((key) => !lockedFiles.has(key)));
  const gone: RuleLock[] = [...rule.locks.values()].filter((lock) => !below.has(didKey(lock.scope, lock.name)));
  let position: bigint | undefined;
  let stuck = false;
  if (unlocked.size > 0) {
    const content =
      ruleDid.did.record.didType === 'FILE'
        ? await loadRuleContent(context, ruleDid, heldBy(rule))
        : await loadRuleContent(context, ruleDid, { ...heldBy(rule), onlyFiles: unlocked });
    const cause = { kind: 'attach', detail: 'files attached while the rule was placed' } as const;
    try {
      position = (await applyRule(context, rule, content, cause, withStep(metadata, 'lock'))).position;
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      // As after an attach the rule cannot follow: STUCK with the reason.
      position = (
        await handleCommand(context, ruleDecider, ruleStreamName(rule.record.id), {
          type: 'SetRuleState',
          data: { ruleId: rule.record.id, state: 'STUCK', error: `${error.exceptionClass}: ${error.message}` },
          metadata: withStep(metadata, 'stuck'),
        })
      ).position;
      stuck = true;
    }
  }
  if (gone.length > 0) {
    const released = await releaseLocks(
      context,
      rule,
      gone,
      [],
      { kind: 'detach', detail: 'files detached while the rule was placed' },
      withStep(metadata, 'release'),
    );
    position = released ?? position;
  }
  return { position, locked: stuck ? 0 : unlocked.size, released: gone.length, stuck };
};

const withStep = (metadata: CommandMetadata, step: string): CommandMetadata =>
  metadata.causationId ? { ...metadata, causationId: `${metadata.causationId}/${step}` } : metadata;
