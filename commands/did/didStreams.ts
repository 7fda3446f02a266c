import { childFactsOf, type AttachCandidate, type AttachRequest, type ChildFacts } from '../../domain/did/didContent.ts';
import { didKey, didStreamName, type Did, type DidEvent } from '../../domain/did/did.ts';
import {
  evolveMetaConvention,
  initialMetaConvention,
  metaConventionStreamName,
  type MetaConvention,
  type MetaConventionEvent,
  type MetaConventionState,
} from '../../domain/metaConvention/metaConvention.ts';
import type { Caller, ScopeAccess } from '../../domain/permission/policy.ts';
import { evolveFileReplicas, initialFileReplicas, type DidStreamEvent, type FileReplicas } from '../../domain/replica/replica.ts';
import { ScopeNotFound } from '../../domain/shared/errors.ts';
import type { DidGraph } from './didGraph.ts';
import { loadScope } from '../scope/scopeCommands.ts';
import { loadState, type Aggregate, type CommandContext, type Decision } from '../handleCommand.ts';

/** Helpers every DID command shares: the aggregate, its decisions, and the facts they read. */

/**
 * One aggregate per DID stream: the DID and, for a file, its replicas (they share the file's
 * stream). DID decisions see only the DID; replica decisions see both.
 */
export const didStreamAggregate: Aggregate<FileReplicas, DidStreamEvent> = {
  name: 'did',
  initialState: initialFileReplicas,
  evolve: evolveFileReplicas,
};

export type DidDecision = Decision<FileReplicas, DidStreamEvent>;

export const loadFileReplicas = async (context: CommandContext, scope: string, name: string): Promise<FileReplicas> =>
  (await loadState(context, didStreamName(scope, name), didStreamAggregate)).state;

export const loadDid = async (context: CommandContext, scope: string, name: string): Promise<Did> =>
  (await loadFileReplicas(context, scope, name)).did;

/** A decision on one DID's stream that only needs the DID. */
export const onDid = (scope: string, name: string, decide: (state: Did) => DidEvent[]): DidDecision =>
  onDidStream(scope, name, (state) => decide(state.did));

/** A decision on one DID's stream that needs the file's replicas too. */
export const onDidStream = (scope: string, name: string, decide: (state: FileReplicas) => DidStreamEvent[] | Promise<DidStreamEvent[]>): DidDecision => ({
  streamName: didStreamName(scope, name),
  aggregate: didStreamAggregate,
  decide,
});

/** The caller and the owner of `scope`, which DID permissions are decided on. */
export const scopeAccess = async (context: CommandContext, caller: Caller, scope: string): Promise<ScopeAccess> => {
  const state = await loadScope(context, scope);
  return { caller, scope, scopeOwner: state.status === 'Absent' ? undefined : state.account };
};

export const requireScope = async (context: CommandContext, scope: string): Promise<void> => {
  if ((await loadScope(context, scope)).status === 'Absent') throw new ScopeNotFound('Scope not found!');
};

export const metaConventionAggregate: Aggregate<MetaConventionState, MetaConventionEvent> = {
  name: 'metaConvention',
  initialState: initialMetaConvention,
  evolve: evolveMetaConvention,
};

export const loadMetaConvention = async (context: CommandContext, key: string): Promise<MetaConventionState> =>
  (await loadState(context, metaConventionStreamName(key), metaConventionAggregate)).state;

/** The conventions of the given metadata keys, for those that have one. */
export const loadConventions = async (context: CommandContext, keys: Iterable<string>): Promise<Map<string, MetaConvention>> => {
  const conventions = new Map<string, MetaConvention>();
  for (const key of new Set(keys)) {
    const state = await loadMetaConvention(context, key);
    if (state.status === 'Defined') conventions.set(key, state);
  }
  return conventions;
};

/**
 * The facts of every requested child. They come from the DID read model in a few batched queries
 * (a stream read per child would cost a query each: 100 000 for a big registration). What the
 * read model shows of an existing file does not change (its size and checksums are reserved
 * keys); a child it does not show yet, too new to be projected, is read from its own stream, so
 * a DID that exists is never reported missing.
 */
export const loadAttachCandidates = async (
  context: CommandContext,
  requests: readonly AttachRequest[],
): Promise<AttachCandidate[]> => {
  const facts = new Map<string, ChildFacts | undefined>(await context.didGraph.catalogued(requests));
  for (const request of requests) {
    const key = didKey(request.scope, request.name);
    if (facts.has(key)) continue;
    facts.set(key, childFactsOf(await loadDid(context, request.scope, request.name)));
  }
  return requests.map((request) => ({ request, facts: facts.get(didKey(request.scope, request.name)) }));
};
