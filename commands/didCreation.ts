import { childFactsOf, type AttachRequest } from '../domain/did/didContent.ts';
import { createCollection, registerFile, type FileRegistration } from '../domain/did/didCreation.ts';
import { didKey, evolveDid, type CollectionType, type Did, type DidEvent } from '../domain/did/did.ts';
import { allowOnly, DID_PERMISSIONS } from '../domain/permission/policy.ts';
import { AccountNotFound, DataIdentifierAlreadyExists } from '../domain/shared/errors.ts';
import type { CommandMetadata, Event } from '../domain/shared/event.ts';
import { loadAccount, loadCaller } from './caller.ts';
import type { DidGraph } from './didGraph.ts';
import { loadAttachCandidates, loadConventions, onDid, requireScope, scopeAccess, type DidDecision } from './dids.ts';
import { handleCommands, type CommandContext, type CommandOutcome } from './handleCommand.ts';

/** A collection to create, as `add_did` / `add_dids` describe it (already validated at the edge). */
export type NewCollection = Readonly<{
  scope: string;
  name: string;
  didType: CollectionType;
  /** The owner; default the issuer. */
  account?: string;
  monotonic: boolean;
  /** Seconds until expiry; null for never. */
  lifetime: number | null;
  meta: Readonly<Record<string, unknown>>;
  /** Content to attach at once (DIDs created earlier in the same request count). */
  children: readonly AttachRequest[];
}>;

export type DidWriteOutcome = Readonly<{ position: bigint | undefined }>;

/** The global position of the last event a multi-stream command appended. */
export const lastPosition = (outcomes: readonly CommandOutcome<unknown, Event>[]): bigint | undefined =>
  outcomes.reduce<bigint | undefined>((last, outcome) => (outcome.position !== undefined && (last === undefined || outcome.position > last) ? outcome.position : last), undefined);

const ensureAccountExists = async (context: CommandContext, account: string): Promise<void> => {
  const state = await loadAccount(context, account);
  if (state.status === 'Absent' || state.status === 'DELETED') throw new AccountNotFound(`Account ID '${account}' does not exist`);
};

/**
 * Creates collections in one atomic step, in request order: a DID may take as content a DID
 * created before it in the same request, as in Rucio's single transaction. `single` selects the
 * permission message of `add_did` over that of `add_dids`.
 */
export const addCollections = async (
  context: CommandContext,
  graph: DidGraph,
  data: { dids: readonly NewCollection[]; single: boolean },
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  for (const did of data.dids) {
    const access = await scopeAccess(context, caller, did.scope);
    allowOnly(
      DID_PERMISSIONS.writeCollection(access),
      data.single
        ? `Account ${caller.account} can not add data identifier to scope ${did.scope}.`
        : `Account ${caller.account} can not bulk add data identifier.`,
    );
  }
  const ownKeys = new Set<string>();
  for (const did of data.dids) {
    const key = didKey(did.scope, did.name);
    if (ownKeys.has(key)) throw new DataIdentifierAlreadyExists('Data Identifier already exists!');
    ownKeys.add(key);
    await requireScope(context, did.scope);
    if (did.account !== undefined) await ensureAccountExists(context, did.account);
  }
  const conventions = await loadConventions(context, data.dids.flatMap((did) => Object.keys(did.meta)));
  const outside = await loadAttachCandidates(
    context,
    graph,
    data.dids.flatMap((did) => did.children).filter((child) => !ownKeys.has(didKey(child.scope, child.name))),
  );
  const outsideFacts = new Map(outside.map((candidate) => [didKey(candidate.request.scope, candidate.request.name), candidate.facts]));
  // Decisions run in request order; each records the DID it creates for the ones after it.
  const decided = new Map<string, Did>();
  const decisions = data.dids.map((did) =>
    onDid(did.scope, did.name, (state) => {
      const children = did.children.map((request) => {
        const key = didKey(request.scope, request.name);
        const own = decided.get(key);
        return { request, facts: ownKeys.has(key) ? (own ? childFactsOf(own) : undefined) : outsideFacts.get(key) };
      });
      const events = createCollection(
        {
          type: 'CreateCollection',
          data: { ...did, account: did.account ?? caller.account, conventions, children },
          metadata,
        },
        state,
      );
      decided.set(didKey(did.scope, did.name), events.reduce(evolveDid, state));
      return events;
    }),
  );
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};

/**
 * Everything replica registration needs to create file DIDs inside its own decision on the file
 * streams: checks that every scope and owner exists, loads the metadata conventions, and returns
 * the pure decision for one file (an existing file is reused as it is, as Rucio's add_replicas
 * does). Permissions are the caller's business: registering replicas has its own.
 */
export const prepareFileRegistration = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<{ decide(file: FileRegistration, state: Did): DidEvent[] }> => {
  for (const scope of new Set(files.map((file) => file.scope))) await requireScope(context, scope);
  for (const account of new Set(files.flatMap((file) => (file.account ? [file.account] : [])))) await ensureAccountExists(context, account);
  const conventions = await loadConventions(context, files.flatMap((file) => Object.keys(file.meta ?? {})));
  return { decide: (file, state) => registerFile({ type: 'RegisterFile', data: { file, conventions }, metadata }, state) };
};

/** One decision per distinct file (the first description of a file wins), for `handleCommands`. */
export const fileRegistrationDecisions = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<DidDecision[]> => {
  const registration = await prepareFileRegistration(context, files, metadata);
  const distinct = new Map<string, FileRegistration>();
  for (const file of files) {
    const key = didKey(file.scope, file.name);
    if (!distinct.has(key)) distinct.set(key, file);
  }
  return [...distinct.values()].map((file) => onDid(file.scope, file.name, (state) => registration.decide(file, state)));
};

/** Creates the missing file DIDs of `files` in one atomic step; existing files are left alone. */
export const createFileDids = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const decisions = await fileRegistrationDecisions(context, files, metadata);
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};
