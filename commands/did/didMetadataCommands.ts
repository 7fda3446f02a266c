import { assertNotReserved, planMetadataChange } from '../../domain/did/didMetadata.ts';
import { didKey, didStreamName } from '../../domain/did/did.ts';
import type { MetaConvention } from '../../domain/metaConvention/metaConvention.ts';
import { allowOnly, DID_PERMISSIONS, type Caller } from '../../domain/permission/policy.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import type { DidWriteOutcome } from './didCreationCommands.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { handleCommand, handleCommands, lastPosition, StepPlan, type CommandContext } from '../handleCommand.ts';
import { loadConventions, loadDid, scopeAccess } from './didStreams.ts';

/** Metadata for one DID; `recursive` copies plain column values to its direct children. */
export type MetadataWrite = Readonly<{
  scope: string;
  name: string;
  meta: Readonly<Record<string, unknown>>;
  recursive: boolean;
}>;

const addMetadataMessage = (caller: Caller, write: { scope: string; name: string }) =>
  `Account ${caller.account} can not add metadata to data identifier ${write.scope}:${write.name}.`;

/**
 * The commands one metadata write needs, added to the step's plan: the DID's own, its children's
 * for `recursive`, and its parents' when a file's `guid` or `events` (copied into its datasets'
 * content) change.
 */
const planMetadataWrite = async (
  context: CommandContext,
  plan: StepPlan,
  write: MetadataWrite,
  conventions: ReadonlyMap<string, MetaConvention>,
  metadata: CommandMetadata,
): Promise<void> => {
  const onDid = (scope: string, name: string, command: DidStreamCommand) =>
    plan.add(didStreamDecider, didStreamName(scope, name), command);
  onDid(write.scope, write.name, {
    type: 'SetDidMetadata',
    data: { scope: write.scope, name: write.name, meta: write.meta, conventions },
    metadata,
  });
  const state = await loadDid(context, write.scope, write.name);
  if (state.status !== 'Live') return;
  // Planned here only to know which other streams the write reaches; the DID's decision re-checks it.
  const change = planMetadataChange(state.record, write.meta, metadata.now, conventions);
  if (write.recursive && Object.keys(change.recursiveColumns).length > 0) {
    for (const child of state.content.children.values()) {
      onDid(child.scope, child.name, {
        type: 'CopyDidColumns',
        data: { scope: child.scope, name: child.name, columns: change.recursiveColumns },
        metadata,
      });
    }
  }
  // The planner gives `guid` as text and `events` as a number, either null when cleared.
  const { guid, events } = change.columns;
  const contentChange = {
    ...('guid' in change.columns && (typeof guid === 'string' || guid === null) ? { guid } : {}),
    ...('events' in change.columns && (typeof events === 'number' || events === null) ? { events } : {}),
  };
  if (Object.keys(contentChange).length > 0) {
    for (const parent of await context.didGraph.parents(write.scope, write.name)) {
      onDid(parent.scope, parent.name, {
        type: 'UpdateContentEntry',
        data: { ...parent, child: { scope: write.scope, name: write.name }, ...contentChange },
        metadata,
      });
    }
  }
};

/** Sets metadata on one DID: one key (`single`) or several, as Rucio's two POST /meta routes. */
export const setMetadata = async (
  context: CommandContext,
  data: MetadataWrite & { single: boolean },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  assertNotReserved(data.meta, caller.account, data.scope, data.name, data.single);
  allowOnly(
    DID_PERMISSIONS.setMetadata(await scopeAccess(context, caller, data.scope)),
    addMetadataMessage(caller, data),
  );
  const conventions = await loadConventions(context, Object.keys(data.meta));
  const plan = new StepPlan();
  await planMetadataWrite(context, plan, data, conventions, metadata);
  return { position: lastPosition(await handleCommands(context, plan.decisions(), { metadata })) };
};

/**
 * Sets metadata on many DIDs in one atomic step: if any DID cannot take its metadata, none is
 * written. A DID listed twice gets both dictionaries, the later winning on shared keys.
 */
export const setDidsMetadataBulk = async (
  context: CommandContext,
  data: { dids: readonly { scope: string; name: string; meta: Readonly<Record<string, unknown>> }[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  const merged = new Map<string, MetadataWrite>();
  for (const entry of data.dids) {
    allowOnly(
      DID_PERMISSIONS.setMetadata(await scopeAccess(context, caller, entry.scope)),
      addMetadataMessage(caller, entry),
    );
    assertNotReserved(entry.meta, caller.account, entry.scope, entry.name, false);
    const key = didKey(entry.scope, entry.name);
    const previous = merged.get(key);
    merged.set(key, {
      scope: entry.scope,
      name: entry.name,
      meta: { ...(previous?.meta ?? {}), ...entry.meta },
      recursive: false,
    });
  }
  const conventions = await loadConventions(
    context,
    data.dids.flatMap((entry) => Object.keys(entry.meta)),
  );
  const plan = new StepPlan();
  for (const write of merged.values()) await planMetadataWrite(context, plan, write, conventions, metadata);
  return { position: lastPosition(await handleCommands(context, plan.decisions(), { metadata })) };
};

/** Deletes one JSON metadata key; like writes, for admins and the scope's owner. */
export const deleteMetadata = async (
  context: CommandContext,
  data: { scope: string; name: string; key: string },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.setMetadata(await scopeAccess(context, caller, data.scope)),
    `Account ${caller.account} can not delete metadata of data identifier ${data.scope}:${data.name}.`,
  );
  const outcome = await handleCommand(context, didStreamDecider, didStreamName(data.scope, data.name), {
    type: 'DeleteDidMetadataKey',
    data,
    metadata,
  });
  return { position: outcome.position };
};
