import {
  childFactsOf,
  type AttachCandidate,
  type AttachRequest,
  type ChildFacts,
} from '../../domain/did/didContent.ts';
import { didKey, didStreamName, type Did } from '../../domain/did/did.ts';
import {
  metaConventionStreamName,
  type MetaConvention,
  type MetaConventionState,
} from '../../domain/metaConvention/metaConvention.ts';
import { metaConventionDecider } from '../../domain/metaConvention/metaConventionDecider.ts';
import type { Caller, ScopeAccess } from '../../domain/permission/policy.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { DidStreamEvent, FileReplicas } from '../../domain/replica/replica.ts';
import { ScopeNotFound } from '../../domain/shared/errors.ts';
import { loadScope } from '../scope/scopeCommands.ts';
import {
  loadAggregate,
  onStream,
  type CommandContext,
  type DecidedStates,
  type StreamDecision,
} from '../handleCommand.ts';

/**
 * Helpers every DID command shares: decisions on DID streams, and the facts they read. A DID
 * stream's aggregate is the DID with, for a file, its replicas (didStreamDecider).
 */

export type DidDecision = StreamDecision<FileReplicas, DidStreamCommand, DidStreamEvent>;

export const loadFileReplicas = (context: CommandContext, scope: string, name: string): Promise<FileReplicas> =>
  loadAggregate(context, didStreamDecider, didStreamName(scope, name));

export const loadDid = async (context: CommandContext, scope: string, name: string): Promise<Did> =>
  (await loadFileReplicas(context, scope, name)).did;

/** Commands for one DID stream, decided in order (a function: decided after the streams before it). */
export const onDidStream = (
  scope: string,
  name: string,
  commands: DidStreamCommand | readonly DidStreamCommand[] | ((decided: DecidedStates) => readonly DidStreamCommand[]),
): DidDecision => onStream(didStreamDecider, didStreamName(scope, name), commands);

/** The state a DID stream decided earlier in the same step has become. */
export const decidedDid = (decided: DecidedStates, scope: string, name: string): Did | undefined =>
  decided.stateOf(didStreamDecider, didStreamName(scope, name))?.did;

/** The caller and the owner of `scope`, which DID permissions are decided on. */
export const scopeAccess = async (context: CommandContext, caller: Caller, scope: string): Promise<ScopeAccess> => {
  const state = await loadScope(context, scope);
  return { caller, scope, scopeOwner: state.status === 'Absent' ? undefined : state.account };
};

export const requireScope = async (context: CommandContext, scope: string): Promise<void> => {
  if ((await loadScope(context, scope)).status === 'Absent') throw new ScopeNotFound('Scope not found!');
};

export const loadMetaConvention = (context: CommandContext, key: string): Promise<MetaConventionState> =>
  loadAggregate(context, metaConventionDecider, metaConventionStreamName(key));

/** The conventions of the given metadata keys, for those that have one. */
export const loadConventions = async (
  context: CommandContext,
  keys: Iterable<string>,
): Promise<Map<string, MetaConvention>> => {
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
