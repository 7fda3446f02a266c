import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey, type DidRef } from '../../domain/did/did.ts';
import {
  planExceptions,
  type ExceptionDidFacts,
  type PlannedExceptions,
} from '../../domain/lifetimeException/exceptionRequest.ts';
import { lifetimeExceptionStreamName } from '../../domain/lifetimeException/lifetimeException.ts';
import { lifetimeExceptionDecider } from '../../domain/lifetimeException/lifetimeExceptionDecider.ts';
import { allowOnly } from '../../domain/permission/policy.ts';
import { LIFETIME_EXCEPTION_PERMISSIONS } from '../../domain/permission/subscriptionPolicy.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadConfig } from '../config/configCommands.ts';
import { loadDid } from '../did/didStreams.ts';
import {
  handleCommand,
  handleCommands,
  lastPosition,
  loadAggregate,
  onStream,
  type CommandContext,
} from '../handleCommand.ts';
import { newId } from '../newId.ts';

/**
 * Asking for lifetime exceptions (any account) and deciding them (admins). The DIDs' facts are
 * read from their streams and their rules' streams; whether the requester holds an exception for
 * a DID already comes from the read models (`hasOpenException`), as Rucio's database would tell.
 */

export type ExceptionAsked = Readonly<{
  dids: readonly DidRef[];
  pattern: string | null;
  comments: string | null;
  expiresAt: string | null;
}>;

/** A DID's end of life: its `eol_at` column, else the earliest `eol_at` of its rules. */
const endOfLifeOf = async (
  context: CommandContext,
  eolColumn: unknown,
  ruleIds: Iterable<string>,
): Promise<string | null> => {
  if (typeof eolColumn === 'string') return eolColumn;
  let earliest: string | null = null;
  for (const ruleId of ruleIds) {
    const rule = await loadAggregate(context, ruleDecider, ruleStreamName(ruleId));
    const eolAt = rule.status === 'Live' ? rule.record.eolAt : null;
    if (eolAt !== null && (earliest === null || eolAt < earliest)) earliest = eolAt;
  }
  return earliest;
};

/**
 * `add_exception`: one WAITING exception per group of affected DIDs, all written in one step.
 * Returns Rucio's answer (`exceptions` by id, `unknown`, `not_affected`).
 */
export const addException = async (
  context: CommandContext,
  request: ExceptionAsked,
  metadata: CommandMetadata,
  facts: Readonly<{ hasOpenException(did: DidRef): Promise<boolean> }>,
): Promise<PlannedExceptions & { position: bigint | undefined }> => {
  const caller = await loadCaller(context, metadata.account);
  const { sections } = await loadConfig(context);
  const didFacts = new Map<string, ExceptionDidFacts>();
  for (const did of request.dids) {
    const state = await loadDid(context, did.scope, did.name);
    if (state.status !== 'Live') continue;
    const datatype = state.record.columns.datatype;
    didFacts.set(didKey(did.scope, did.name), {
      didType: state.record.didType,
      datatype: typeof datatype === 'string' ? datatype : null,
      endOfLife: await endOfLifeOf(context, state.record.columns.eol_at, state.rules.keys()),
      openException: await facts.hasOpenException(did),
    });
  }
  const planned = planExceptions(
    {
      ...request,
      account: caller.account,
      now: metadata.now,
      cutoffDate: settingValue(sections, SETTINGS.lifetimeModelCutoffDate),
      maxExtensionDays: settingValue(sections, SETTINGS.lifetimeModelMaxExtension),
    },
    didFacts,
    newId,
  );
  if (planned.exceptions.length === 0) return { ...planned, position: undefined };
  const outcomes = await handleCommands(
    context,
    planned.exceptions.map((exception) =>
      onStream(
        lifetimeExceptionDecider,
        lifetimeExceptionStreamName(exception.id),
        { type: 'RequestException', data: { exception }, metadata },
        { fresh: true },
      ),
    ),
    { metadata },
  );
  return { ...planned, position: lastPosition(outcomes) };
};

/** `update_exception`: an admin approves or rejects (the approver is recorded with the decision). */
export const decideException = async (
  context: CommandContext,
  data: { id: string; state: unknown },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    LIFETIME_EXCEPTION_PERMISSIONS.updateException(caller),
    `Account ${caller.account} can not update lifetime exceptions.`,
  );
  const outcome = await handleCommand(context, lifetimeExceptionDecider, lifetimeExceptionStreamName(data.id), {
    type: 'DecideException',
    data,
    metadata,
  });
  return { position: outcome.position };
};
