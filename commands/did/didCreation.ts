import { childFactsOf, type AttachRequest } from '../../domain/did/didContent.ts';
import { didKey, type CollectionType } from '../../domain/did/did.ts';
import type { DidStreamCommand } from '../../domain/replica/didStreamDecider.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import type { ReplicaFile } from '../../domain/replica/replicaRegistration.ts';
import { DataIdentifierAlreadyExists } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { childFactsLookup } from './didContent.ts';
import { decidedDid, loadConventions, onDidStream, requireScope, scopeAccess } from './didStreams.ts';
import { ensureAccountExists } from './fileRegistration.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { planReplicaRegistrations } from '../replica/replicaRegistration.ts';

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
  /** `rse` with content: the children's replicas on it are registered first (datasets only, as in Rucio). */
  replicas?: Readonly<{ rse: string; files: readonly ReplicaFile[] }>;
}>;

export type DidWriteOutcome = Readonly<{ position: bigint | undefined }>;

/**
 * Creates collections in one atomic step, in request order: a DID may take as content a DID
 * created before it in the same request, as in Rucio's single transaction. `single` selects the
 * permission message of `add_did` over that of `add_dids`.
 */
export const addCollections = async (
  context: CommandContext,
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
  const registrations = data.dids.flatMap((did) => (did.replicas && did.didType === 'DATASET' ? [{ ...did.replicas, ignoreAvailability: true }] : []));
  const plan = registrations.length > 0 ? await planReplicaRegistrations(context, caller, registrations, metadata) : undefined;
  const factsOf = await childFactsLookup(
    context,
    data.dids.flatMap((did) => did.children).filter((child) => !ownKeys.has(didKey(child.scope, child.name))),
    plan,
  );
  // Decisions run in request order; a DID created earlier in the request is read from its new state.
  const collections = data.dids.map((did) =>
    onDidStream(did.scope, did.name, (decided): DidStreamCommand[] => {
      const children = did.children.map((request) => {
        const own = ownKeys.has(didKey(request.scope, request.name));
        const created = own ? decidedDid(decided, request.scope, request.name) : undefined;
        return { request, facts: own ? (created ? childFactsOf(created) : undefined) : factsOf(request, decided) };
      });
      return [{ type: 'CreateCollection', data: { ...did, account: did.account ?? caller.account, conventions, children }, metadata }];
    }),
  );
  return { position: lastPosition(await handleCommands(context, [...(plan?.decisions ?? []), ...collections], { metadata })) };
};

