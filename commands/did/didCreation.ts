import { childFactsOf, type AttachRequest } from '../../domain/did/didContent.ts';
import { didKey, type CollectionType } from '../../domain/did/did.ts';
import type { DidStreamCommand } from '../../domain/replica/didStreamDecider.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import type { ReplicaFile } from '../../domain/replica/replicaRegistration.ts';
import { DataIdentifierAlreadyExists } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { childFactsLookup } from './didContent.ts';
import { decidedDid, loadConventions, loadDid, requireScope, scopeAccess } from './didStreams.ts';
import { ensureAccountExists } from './fileRegistration.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { planReplicaRegistrations, type RegistrationPlan } from '../replica/replicaRegistration.ts';
import { randomInt } from 'node:crypto';
import { planRules, type RuleDidFacts, type RuleRequest } from '../../domain/rule/ruleCreation.ts';
import type { PlacementDataset, RuleContent } from '../../domain/rule/rulePlacement.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import { loadAccount } from '../caller.ts';
import { lockConditionsOf, quotaFactsOf } from '../rule/ruleCreation.ts';
import { newId, RuleStep } from '../rule/ruleStep.ts';
import { loadNameSchema } from '../config/configCommands.ts';

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
  /** Replication rules to add on the new collection, in the same step. */
  rules?: readonly CollectionRule[];
}>;

export type DidWriteOutcome = Readonly<{ position: bigint | undefined }>;

/**
 * Creates collections in one atomic step, in request order: a DID may take as content a DID
 * created before it in the same request, as in Rucio's single transaction. `single` selects the
 * permission message of `add_did` over that of `add_dids`. Rules asked for with a DID are added in
 * the same step, on its content as the step leaves it; a refused rule refuses everything.
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
  const conventions = await loadConventions(
    context,
    data.dids.flatMap((did) => Object.keys(did.meta)),
  );
  const registrations = data.dids.flatMap((did) =>
    did.replicas && did.didType === 'DATASET' ? [{ ...did.replicas, ignoreAvailability: true }] : [],
  );
  const plan =
    registrations.length > 0 ? await planReplicaRegistrations(context, caller, registrations, metadata) : undefined;
  const outside = data.dids
    .flatMap((did) => did.children)
    .filter((child) => !ownKeys.has(didKey(child.scope, child.name)));
  const factsOf = await childFactsLookup(context, outside, plan);

  const nameSchema = await loadNameSchema(context);
  const step = new RuleStep(metadata);
  for (const file of plan?.commands ?? [])
    for (const command of file.commands) step.onDid(file.scope, file.name, command);
  // Decisions run in request order; a DID created earlier in the request is read from its new state.
  for (const did of data.dids) {
    step.onDid(did.scope, did.name, (decided): DidStreamCommand[] => {
      const children = did.children.map((request) => {
        const own = ownKeys.has(didKey(request.scope, request.name));
        const created = own ? decidedDid(decided, request.scope, request.name) : undefined;
        return { request, facts: own ? (created ? childFactsOf(created) : undefined) : factsOf(request, decided) };
      });
      return [
        {
          type: 'CreateCollection',
          data: { ...did, account: did.account ?? caller.account, conventions, children, nameSchema },
          metadata,
        },
      ];
    });
  }
  for (const did of data.dids) {
    if (did.rules && did.rules.length > 0)
      await planCollectionRules(context, step, did, data.dids, plan, metadata, caller.account);
  }
  return { position: lastPosition(await handleCommands(context, step.decisions(), { metadata })) };
};

/** One rule of `add_did(s)`: add_rule's options, for the DID it comes with. */
export type CollectionRule = Omit<RuleRequest, 'dids'>;

/**
 * The rules of a collection created in this step: its content is what the request attaches (files
 * registered now are where the request puts them, others where the catalogue has them), and its
 * rules are planned on that, exactly as `add_rule` would on the collection once it exists.
 */
export const planCollectionRules = async (
  context: CommandContext,
  step: RuleStep,
  did: NewCollection,
  all: readonly NewCollection[],
  plan: RegistrationPlan | undefined,
  metadata: CommandMetadata,
  caller: string,
): Promise<void> => {
  const datasets: PlacementDataset[] = [];
  const datasetOf = async (
    scope: string,
    name: string,
    children: readonly AttachRequest[],
  ): Promise<PlacementDataset> => {
    const existing = children.filter((child) => !plan?.registered.has(didKey(child.scope, child.name)));
    const catalogued = await context.didGraph.catalogued(existing);
    const replicas = await context.ruleFacts.replicasOf(existing);
    return {
      scope,
      name,
      closed: false,
      files: children.map((child) => {
        const key = didKey(child.scope, child.name);
        const registered = plan?.registered.get(key);
        const replicaStates = registered
          ? Object.fromEntries(Object.entries(registered.replicas).map(([rseId, state]) => [rseId, { state }]))
          : (replicas.get(key) ?? {});
        return {
          scope: child.scope,
          name: child.name,
          bytes: registered?.bytes ?? catalogued.get(key)?.bytes ?? 0,
          replicas: replicaStates,
        };
      }),
    };
  };
  if (did.didType === 'DATASET') datasets.push(await datasetOf(did.scope, did.name, did.children));
  else {
    for (const child of did.children) {
      const own = all.find((other) => other.scope === child.scope && other.name === child.name);
      if (own?.didType === 'DATASET') datasets.push(await datasetOf(own.scope, own.name, own.children));
      else if (!own) {
        const state = await loadDid(context, child.scope, child.name);
        if (state.status === 'Live' && state.record.didType === 'DATASET') {
          datasets.push(
            await datasetOf(
              child.scope,
              child.name,
              [...state.content.children.values()].map(({ scope, name }) => ({ scope, name })),
            ),
          );
        }
      }
    }
  }
  const content: RuleContent = { kind: 'collection', datasets };
  const length = datasets.reduce((sum, dataset) => sum + dataset.files.length, 0);
  const bytes = datasets.reduce(
    (sum, dataset) => sum + dataset.files.reduce((total, file) => total + file.bytes, 0),
    0,
  );
  await planRulesOnNewDid(
    context,
    step,
    { scope: did.scope, name: did.name, didType: did.didType, length, bytes, closed: false, content },
    did.rules ?? [],
    metadata,
    caller,
  );
};

/**
 * Rules on a DID created in the same step (a collection of `add_did(s)`, a file DIRAC registers),
 * planned on `target`'s content as the step leaves it, exactly as `add_rule` would plan them once
 * the DID exists: each rule attached to the DID, its locks on the files' streams with the
 * transfers they need, and the rule's own stream, all added to `step`.
 */
export const planRulesOnNewDid = async (
  context: CommandContext,
  step: RuleStep,
  target: RuleDidFacts & { content: RuleContent },
  rules: readonly CollectionRule[],
  metadata: CommandMetadata,
  caller: string,
): Promise<void> => {
  const { content } = target;
  const rses = await context.ruleFacts.rses();
  for (const rule of rules) {
    const owner = await loadAccount(context, rule.account);
    if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ${rule.account} does not exist`);
    const quota = await quotaFactsOf(context, rule.account, owner.attributes, rses);
    const request: RuleRequest = { ...rule, dids: [{ scope: target.scope, name: target.name }] };
    const [planned] = planRules(request, {
      rses,
      quota,
      dids: [target],
      ruleIds: [newId()],
      now: metadata.now,
      seed: randomInt(2 ** 31),
      requestedBy: caller,
    });
    const { record } = planned!;
    step.onDid(target.scope, target.name, {
      type: 'AttachRule',
      data: {
        scope: target.scope,
        name: target.name,
        ruleId: record.id,
        rule: {
          account: record.account,
          rseExpression: record.rseExpression,
          copies: record.copies,
          locked: record.locked,
        },
      },
      metadata,
    });
    const locksOf = planned!.placement
      ? step.lockFiles(record, planned!.placement.locks, await lockConditionsOf(context, record, rses, content))
      : () => [];
    const datasetLocks = (planned!.placement?.datasetLocks ?? []).map((lock) => ({
      scope: lock.scope,
      name: lock.name,
      rseId: lock.rse.rseId,
      rse: lock.rse.rse,
      length: lock.length,
      bytes: lock.bytes,
    }));
    step.onRule(record.id, (decided) => [
      {
        type: 'AddRule',
        data: {
          rule: record,
          state: planned!.state,
          locks: locksOf(decided),
          datasetLocks,
          targetRses: planned!.targetRses,
          autoLocked: planned!.autoLocked,
          didClosed: target.closed,
        },
        metadata,
      },
    ]);
  }
};
