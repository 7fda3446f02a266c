import { isArchiveName } from '../../domain/did/archiveContent.ts';
import { childFactsOf, type AttachDids, type AttachRequest, type ChildFacts } from '../../domain/did/didContent.ts';
import { didKey, didStreamName, type Did, type DidRef } from '../../domain/did/did.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import type { ReplicaFile } from '../../domain/replica/replicaRegistration.ts';
import { UnsupportedOperation } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { archiveDecisions } from './archiveContentCommands.ts';
import { loadCaller } from '../caller.ts';
import type { DidWriteOutcome } from './didCreationCommands.ts';
import { decidedDid, loadAttachCandidates, loadDid, onDidStream, scopeAccess, type DidDecision } from './didStreams.ts';
import {
  handleCommand,
  handleCommands,
  lastPosition,
  type CommandContext,
  type DecidedStates,
} from '../handleCommand.ts';
import { planReplicaRegistrations, type RegistrationPlan } from '../replica/replicaRegistrationCommands.ts';

/** Children to attach to one parent. */
export type Attachment = Readonly<{
  scope: string;
  name: string;
  children: readonly AttachRequest[];
  /**
   * `rse` on attach: the children are files whose replicas on that RSE are registered first,
   * creating the missing files, in the same atomic step. Ignored when the parent is a container,
   * as Rucio ignores it there.
   */
  replicas?: Readonly<{ rse: string; files: readonly ReplicaFile[] }>;
}>;

/**
 * Attaches children to one or more parents in one atomic step (Rucio's `attach_dids` when
 * `single`, else `attach_dids_to_dids`). Several attachments to the same parent are decided in
 * order on that parent's stream, so the second sees what the first attached.
 */
export const attachDids = async (
  context: CommandContext,
  data: { attachments: readonly Attachment[]; ignoreDuplicates: boolean; single: boolean },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  const accesses = await Promise.all(
    data.attachments.map((attachment) => scopeAccess(context, caller, attachment.scope)),
  );
  if (data.single) {
    const [attachment] = data.attachments;
    allowOnly(
      DID_PERMISSIONS.writeCollection(accesses[0]!),
      `Account ${caller.account} can not add data identifiers to ${attachment!.scope}:${attachment!.name}.`,
    );
  } else {
    allowOnly(
      DID_PERMISSIONS.attachToMany(caller, accesses),
      `Account ${caller.account} can not add data identifiers.`,
    );
  }

  const byParent = new Map<string, { parent: DidRef; state: Did; batches: AttachRequest[][] }>();
  for (const attachment of data.attachments) {
    const key = didKey(attachment.scope, attachment.name);
    const entry = byParent.get(key) ?? {
      parent: { scope: attachment.scope, name: attachment.name },
      state: await loadDid(context, attachment.scope, attachment.name),
      batches: [],
    };
    entry.batches.push([...attachment.children]);
    byParent.set(key, entry);
  }
  const archives = [...byParent.values()].filter(({ parent, state }) => isArchiveFile(parent, state));
  if (archives.length > 0) {
    // Constituents and collections are decided differently; one call takes one kind of parent, so
    // that it stays one atomic step.
    if (archives.length < byParent.size)
      throw new UnsupportedOperation('Files cannot be attached to archives and to collections in the same call');
    const decisions = await archiveDecisions(
      context,
      data.attachments.map((attachment) => ({
        archive: { scope: attachment.scope, name: attachment.name },
        children: attachment.children,
      })),
      data.ignoreDuplicates,
      metadata,
    );
    return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
  }
  const registrations = data.attachments.flatMap((attachment) => {
    const parent = byParent.get(didKey(attachment.scope, attachment.name))!.state;
    const intoDataset = parent.status === 'Live' && parent.record.didType === 'DATASET';
    return attachment.replicas && intoDataset ? [{ ...attachment.replicas, ignoreAvailability: true }] : [];
  });
  const plan =
    registrations.length > 0 ? await planReplicaRegistrations(context, caller, registrations, metadata) : undefined;
  const factsOf = await childFactsLookup(
    context,
    data.attachments.flatMap((attachment) => attachment.children),
    plan,
  );

  const decisions: DidDecision[] = [...(plan?.decisions ?? [])];
  for (const { parent, state, batches } of byParent.values()) {
    // Only containers can close a cycle, so only they need their ancestors.
    const ancestors =
      state.status === 'Live' && state.record.didType === 'CONTAINER'
        ? await context.didGraph.ancestors(parent.scope, parent.name)
        : new Set<string>();
    decisions.push(
      attachDecision(parent, batches, factsOf, { ignoreDuplicates: data.ignoreDuplicates, ancestors }, metadata),
    );
  }
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/** A file whose name makes it an archive (Rucio's `is_archive`): attaching to it puts files inside. */
const isArchiveFile = (parent: DidRef, state: Did): boolean =>
  state.status === 'Live' && state.record.didType === 'FILE' && isArchiveName(parent.name);

/** The facts of a child when its parent's decision is made. */
export type ChildFactsOf = (request: AttachRequest, decided: DecidedStates) => ChildFacts | undefined;

/**
 * How attach decisions learn the facts of their children: files registered in the same step
 * (`plan`) from their new states, once their decisions have run; every other child from the
 * catalogue, read before deciding.
 */
export const childFactsLookup = async (
  context: CommandContext,
  requests: readonly AttachRequest[],
  plan: RegistrationPlan | undefined,
): Promise<ChildFactsOf> => {
  const outside = requests.filter((request) => !plan?.files.has(didKey(request.scope, request.name)));
  const candidates = await loadAttachCandidates(context, outside);
  const facts = new Map(
    candidates.map((candidate) => [didKey(candidate.request.scope, candidate.request.name), candidate.facts]),
  );
  return (request, decided) => {
    const key = didKey(request.scope, request.name);
    if (!plan?.files.has(key)) return facts.get(key);
    const registered = decidedDid(decided, request.scope, request.name);
    return registered ? childFactsOf(registered) : undefined;
  };
};

/**
 * The decision on one parent's stream for one or more batches of children, decided in order.
 * The children's facts are asked for when deciding, so children created by decisions earlier in
 * the same `handleCommands` (replica registration with an RSE) are seen as they are then.
 */
export const attachDecision = (
  parent: DidRef,
  batches: readonly (readonly AttachRequest[])[],
  factsOf: ChildFactsOf,
  options: { ignoreDuplicates: boolean; ancestors: ReadonlySet<string> },
  metadata: CommandMetadata,
): DidDecision =>
  onDidStream(parent.scope, parent.name, (decided) =>
    batches.map((requests): AttachDids => ({
      type: 'AttachDids',
      data: {
        scope: parent.scope,
        name: parent.name,
        children: requests.map((request) => ({ request, facts: factsOf(request, decided) })),
        ...options,
      },
      metadata,
    })),
  );

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
  const outcome = await handleCommand(context, didStreamDecider, didStreamName(data.scope, data.name), {
    type: 'DetachDids',
    data,
    metadata,
  });
  return { position: outcome.position };
};
