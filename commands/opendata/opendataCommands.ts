import { opendataStreamName, type OpenDataDid, type OpenDataState } from '../../domain/opendata/opendata.ts';
import {
  checkDoi,
  opendataDecider,
  openDataDidNotFound,
  OpenDataChangedMeanwhile,
} from '../../domain/opendata/opendataDecider.ts';
import {
  opendataIdentifierDecider,
  opendataIdentifierStreamName,
  type OpenDataIdentifierKind,
} from '../../domain/opendata/opendataIdentifiers.ts';
import { OPENDATA_PERMISSIONS } from '../../domain/permission/opendataPolicy.ts';
import { allowOnly } from '../../domain/permission/policy.ts';
import { settingValue, SETTINGS, type ConfigSections } from '../../domain/config/settings.ts';
import { RULE_REQUEST_DEFAULTS } from '../../domain/rule/ruleCreation.ts';
import { ConfigurationError, DataIdentifierNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadConfig } from '../config/configCommands.ts';
import { planAddRules } from '../rule/ruleCreationCommands.ts';
import { StepBuilder } from '../stepBuilder.ts';
import { loadDid, scopeAccess } from '../did/didStreams.ts';
import {
  handleCommand,
  handleCommands,
  lastPosition,
  loadAggregate,
  onStream,
  type AnyStreamDecision,
  type CommandContext,
} from '../handleCommand.ts';

/**
 * Registering, updating and deleting open data entries (Rucio 39's gateway/opendata.py and
 * core/opendata.py). A change of DOI or record id claims the new value and releases the old one on
 * their own streams in the same step as the entry's change.
 */

type EntryRef = Readonly<{ scope: string; name: string }>;

const requireWrite = async (context: CommandContext, metadata: CommandMetadata, ref: EntryRef, what: string) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    OPENDATA_PERMISSIONS.write(await scopeAccess(context, caller, ref.scope)),
    `Account ${caller.account} can not ${what} the open data entry of ${ref.scope}:${ref.name}.`,
  );
};

const loadEntry = (context: CommandContext, ref: EntryRef): Promise<OpenDataDid> =>
  loadAggregate(context, opendataDecider, opendataStreamName(ref.scope, ref.name));

/**
 * Runs a step that releases what it read, again from a fresh read when the entry changed in
 * between (another update took or released a DOI meanwhile): a few times, then the refusal.
 */
const withFreshRead = async <T>(step: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof OpenDataChangedMeanwhile) || attempt >= 5) throw error;
    }
  }
};

/** `add_opendata_did`: the DID must exist; it enters the catalogue as a DRAFT. */
export const addOpenDataDid = async (context: CommandContext, ref: EntryRef, metadata: CommandMetadata) => {
  await requireWrite(context, metadata, ref, 'add');
  const did = await loadDid(context, ref.scope, ref.name);
  if (did.status !== 'Live') throw new DataIdentifierNotFound(`Data identifier '${ref.scope}:${ref.name}' not found`);
  const outcome = await handleCommand(context, opendataDecider, opendataStreamName(ref.scope, ref.name), {
    type: 'AddOpenDataDid',
    data: { scope: ref.scope, name: ref.name },
    metadata,
  });
  return { position: outcome.position };
};

/** What `update_opendata_did` may change; absent ones stay. */
export type OpenDataChanges = Readonly<{
  state?: OpenDataState;
  meta?: Readonly<Record<string, unknown>>;
  doi?: string;
  recordId?: number;
}>;

/** Rucio's answer to an update: one part per option given, merged. */
export type OpenDataUpdateResult = Readonly<Record<string, unknown>>;

/** The claim of a new value and the release of the old one, when the value's stream changes. */
const identifierDecisions = (
  ref: EntryRef,
  kind: OpenDataIdentifierKind,
  next: string | number | undefined,
  previous: string | number | null,
  metadata: CommandMetadata,
): AnyStreamDecision[] => {
  if (next === undefined) return [];
  const nextStream = opendataIdentifierStreamName(kind, next);
  const previousStream = previous === null ? null : opendataIdentifierStreamName(kind, previous);
  // Only the case of a DOI changes: the entry keeps its stream.
  if (nextStream === previousStream) return [];
  const claim = (value: string | number) => ({ kind, value, scope: ref.scope, name: ref.name });
  const decisions = [
    onStream(opendataIdentifierDecider, nextStream, { type: 'ClaimOpenDataIdentifier', data: claim(next), metadata }),
  ];
  if (previousStream !== null && previous !== null)
    decisions.push(
      onStream(opendataIdentifierDecider, previousStream, {
        type: 'ReleaseOpenDataIdentifier',
        data: claim(previous),
        metadata,
      }),
    );
  return decisions;
};

/** A collection must be closed to become PUBLIC; a file always is, and so is a DID gone meanwhile (as in Rucio). */
const didClosedNow = async (context: CommandContext, ref: EntryRef): Promise<boolean> => {
  const did = await loadDid(context, ref.scope, ref.name);
  return did.status !== 'Live' || did.record.didType === 'FILE' || did.record.isOpen === false;
};

/**
 * The rule Rucio gives an entry turning PUBLIC when `opendata.rule_enable` is on: none when the DID
 * has the configured one already (found as Rucio finds it: account, expression and copies), else
 * a new one planned into the same step. Answers the parts of the reply it adds.
 */
const openDataRule = async (
  context: CommandContext,
  ref: EntryRef,
  sections: ConfigSections,
  metadata: CommandMetadata,
): Promise<{ decisions: AnyStreamDecision[]; reply: Record<string, unknown> }> => {
  if (!settingValue(sections, SETTINGS.opendataRuleEnable)) return { decisions: [], reply: {} };
  const ruleExpression = settingValue(sections, SETTINGS.opendataRuleRseExpression);
  const account = settingValue(sections, SETTINGS.opendataRuleAccount);
  const copies = settingValue(sections, SETTINGS.opendataRuleCopies);
  if (ruleExpression !== '') {
    const did = await loadDid(context, ref.scope, ref.name);
    const existing =
      did.status === 'Live'
        ? [...did.rules].find(
            ([, rule]) => rule.account === account && rule.rseExpression === ruleExpression && rule.copies === copies,
          )?.[0]
        : undefined;
    if (existing !== undefined)
      return { decisions: [], reply: { rule: existing, comments: 'Replication rule already exists' } };
  }
  const rseExpression = ruleExpression || settingValue(sections, SETTINGS.opendataRseExpression);
  if (rseExpression === '')
    throw new ConfigurationError(
      'opendata.rule_enable needs opendata.rule_rse_expression or opendata.rse_expression: where the rule puts the data.',
    );
  const step = new StepBuilder(metadata);
  const [ruleId] = await planAddRules(
    context,
    {
      ...RULE_REQUEST_DEFAULTS,
      dids: [{ scope: ref.scope, name: ref.name }],
      account,
      copies,
      rseExpression,
      activity: settingValue(sections, SETTINGS.opendataRuleActivity),
      asynchronous: settingValue(sections, SETTINGS.opendataRuleAsynchronous),
    },
    step,
    metadata,
    { configured: true },
  );
  return { decisions: step.decisions(), reply: { rule: ruleId, comments: 'Replication rule created' } };
};

/**
 * `update_opendata_did`: state, metadata, DOI and record id in one atomic step; a DOI or record id
 * another entry holds refuses the whole update. Answers Rucio's summary of what it set.
 */
export const updateOpenDataDid = async (
  context: CommandContext,
  data: EntryRef & { changes: OpenDataChanges },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; result: OpenDataUpdateResult }> => {
  await requireWrite(context, metadata, data, 'update');
  const { changes } = data;
  if (changes.doi !== undefined) checkDoi(changes.doi);
  const streamName = opendataStreamName(data.scope, data.name);
  return withFreshRead(async () => {
    const entry = await loadEntry(context, data);
    if (entry.status !== 'Listed') throw openDataDidNotFound(data.scope, data.name);
    const didClosed = changes.state === 'PUBLIC' ? await didClosedNow(context, data) : true;
    const read = { doi: entry.doi, recordId: entry.recordId };
    // Only a DID that may become PUBLIC gets its rule: a refused move makes no rule.
    const rule =
      changes.state === 'PUBLIC' && didClosed
        ? await openDataRule(context, data, (await loadConfig(context)).sections, metadata)
        : { decisions: [], reply: {} };
    const outcomes = await handleCommands(
      context,
      [
        onStream(opendataDecider, streamName, {
          type: 'UpdateOpenDataDid',
          data: { scope: data.scope, name: data.name, ...changes, didClosed, read },
          metadata,
        }),
        ...identifierDecisions(data, 'doi', changes.doi, entry.doi, metadata),
        ...identifierDecisions(data, 'record_id', changes.recordId, entry.recordId, metadata),
        ...rule.decisions,
      ],
      { metadata },
    );
    const ref = { scope: data.scope, name: data.name };
    const result: Record<string, unknown> = {};
    if (changes.state !== undefined)
      Object.assign(result, ref, { state_old: entry.state, state_new: changes.state }, rule.reply);
    if (changes.meta !== undefined) Object.assign(result, ref, { meta_new: changes.meta });
    if (changes.doi !== undefined) Object.assign(result, ref, { doi_new: changes.doi, doi_old: entry.doi });
    if (changes.recordId !== undefined)
      Object.assign(result, ref, { record_id_new: changes.recordId, record_id_old: entry.recordId });
    return { position: lastPosition(outcomes), result };
  });
};

/** `delete_opendata_did`: a DRAFT only; its DOI and record id become free again. */
export const deleteOpenDataDid = async (context: CommandContext, ref: EntryRef, metadata: CommandMetadata) => {
  await requireWrite(context, metadata, ref, 'delete');
  return withFreshRead(async () => {
    const entry = await loadEntry(context, ref);
    if (entry.status !== 'Listed') throw openDataDidNotFound(ref.scope, ref.name);
    const release = (kind: OpenDataIdentifierKind, value: string | number | null): AnyStreamDecision[] =>
      value === null
        ? []
        : [
            onStream(opendataIdentifierDecider, opendataIdentifierStreamName(kind, value), {
              type: 'ReleaseOpenDataIdentifier',
              data: { kind, value, scope: ref.scope, name: ref.name },
              metadata,
            }),
          ];
    const outcomes = await handleCommands(
      context,
      [
        onStream(opendataDecider, opendataStreamName(ref.scope, ref.name), {
          type: 'DeleteOpenDataDid',
          data: { scope: ref.scope, name: ref.name, read: { doi: entry.doi, recordId: entry.recordId } },
          metadata,
        }),
        ...release('doi', entry.doi),
        ...release('record_id', entry.recordId),
      ],
      { metadata },
    );
    return { position: lastPosition(outcomes) };
  });
};
