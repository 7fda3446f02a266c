import { attachDids as decideAttach, detachDids as decideDetach, type AttachCandidate, type AttachRequest } from '../domain/did/didContent.ts';
import { didKey, evolveDid, type DidEvent, type DidRef } from '../domain/did/did.ts';
import { allowOnly, DID_PERMISSIONS } from '../domain/permission/policy.ts';
import type { CommandMetadata } from '../domain/shared/event.ts';
import { loadCaller } from './caller.ts';
import { lastPosition, type DidWriteOutcome } from './didCreation.ts';
import type { DidGraph } from './didGraph.ts';
import { loadAttachCandidates, loadDid, onDid, scopeAccess, type DidDecision } from './dids.ts';
import { handleCommand, handleCommands, type CommandContext } from './handleCommand.ts';

/** Children to attach to one parent. */
export type Attachment = Readonly<{ scope: string; name: string; children: readonly AttachRequest[] }>;

/**
 * Attaches children to one or more parents in one atomic step (Rucio's `attach_dids` when
 * `single`, else `attach_dids_to_dids`). Several attachments to the same parent are decided in
 * order on that parent's stream, so the second sees what the first attached.
 */
export const attachDids = async (
  context: CommandContext,
  graph: DidGraph,
  data: { attachments: readonly Attachment[]; ignoreDuplicates: boolean; single: boolean },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  const accesses = await Promise.all(data.attachments.map((attachment) => scopeAccess(context, caller, attachment.scope)));
  if (data.single) {
    const [attachment] = data.attachments;
    allowOnly(
      DID_PERMISSIONS.writeCollection(accesses[0]!),
      `Account ${caller.account} can not add data identifiers to ${attachment!.scope}:${attachment!.name}.`,
    );
  } else {
    allowOnly(DID_PERMISSIONS.attachToMany(caller, accesses), `Account ${caller.account} can not add data identifiers.`);
  }

  const byParent = new Map<string, { parent: DidRef; batches: AttachRequest[][] }>();
  for (const attachment of data.attachments) {
    const key = didKey(attachment.scope, attachment.name);
    const entry = byParent.get(key) ?? { parent: { scope: attachment.scope, name: attachment.name }, batches: [] };
    entry.batches.push([...attachment.children]);
    byParent.set(key, entry);
  }
  const candidates = await loadAttachCandidates(context, graph, data.attachments.flatMap((attachment) => attachment.children));
  const factsByKey = new Map(candidates.map((candidate) => [didKey(candidate.request.scope, candidate.request.name), candidate.facts]));
  const withFacts = (requests: readonly AttachRequest[]): AttachCandidate[] =>
    requests.map((request) => ({ request, facts: factsByKey.get(didKey(request.scope, request.name)) }));

  const decisions = [];
  for (const { parent, batches } of byParent.values()) {
    const parentState = await loadDid(context, parent.scope, parent.name);
    // Only containers can close a cycle, so only they need their ancestors.
    const ancestors =
      parentState.status === 'Live' && parentState.record.didType === 'CONTAINER'
        ? await graph.ancestors(parent.scope, parent.name)
        : new Set<string>();
    decisions.push(attachDecision(parent, batches.map(withFacts), { ignoreDuplicates: data.ignoreDuplicates, ancestors }, metadata));
  }
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/**
 * The decision on one parent's stream for one or more batches of children whose facts are known,
 * decided in order. Commands that create the children in the same step (replica registration
 * with an RSE) build the facts from the new states with `childFactsOf` and join this decision to
 * theirs in one `handleCommands`.
 */
export const attachDecision = (
  parent: DidRef,
  batches: readonly (readonly AttachCandidate[])[],
  options: { ignoreDuplicates: boolean; ancestors: ReadonlySet<string> },
  metadata: CommandMetadata,
): DidDecision =>
  onDid(parent.scope, parent.name, (state) => {
    const events: DidEvent[] = [];
    let current = state;
    for (const children of batches) {
      const decided = decideAttach(
        { type: 'AttachDids', data: { scope: parent.scope, name: parent.name, children, ...options }, metadata },
        current,
      );
      current = decided.reduce(evolveDid, current);
      events.push(...decided);
    }
    return events;
  });

export const detachDids = async (
  context: CommandContext,
  data: { scope: string; name: string; children: readonly DidRef[] },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.writeCollection(await scopeAccess(context, caller, data.scope)),
    `Account ${caller.account} can not detach data identifiers from ${data.scope}:${data.name}.`,
  );
  const outcome = await handleCommand(
    context,
    onDid(data.scope, data.name, (state) => decideDetach({ type: 'DetachDids', data, metadata }, state)),
    { metadata },
  );
  return { position: outcome.position };
};
