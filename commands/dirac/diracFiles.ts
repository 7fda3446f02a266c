import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { childFactsOf, type AttachRequest } from '../../domain/did/didContent.ts';
import { didKey, type CollectionType, type DidRef, type DidType } from '../../domain/did/did.ts';
import {
  diracHierarchy,
  diracLifetimeOf,
  extractScope,
  parseDiracLifetimes,
  type ScopeConvention,
} from '../../domain/dirac/diracPaths.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import type { DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaFile } from '../../domain/replica/replicaRegistration.ts';
import { RULE_REQUEST_DEFAULTS } from '../../domain/rule/ruleCreation.ts';
import { DataIdentifierNotFound, ScopeNotFound, UnsupportedOperation } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadConfig } from '../config/configCommands.ts';
import {
  planCollectionRules,
  planRulesOnNewDid,
  type CollectionRule,
  type NewCollection,
} from '../did/didCreationCommands.ts';
import { decidedDid, loadConventions, loadDid, scopeAccess } from '../did/didStreams.ts';
import { handleCommands, lastPosition, type CommandContext, type DecidedStates } from '../handleCommand.ts';
import { loadNameSchema } from '../config/configCommands.ts';
import { planReplicaRegistrations, type ReplicaRegistration } from '../replica/replicaRegistrationCommands.ts';
import { loadScope } from '../scope/scopeCommands.ts';
import { StepBuilder } from '../stepBuilder.ts';

/**
 * DIRAC's file catalogue integration (Rucio's `add_files`, core/dirac.py): files named by their
 * logical path are registered with their replicas, each in the dataset named by its directory,
 * inside containers named by the directories above, up to the VO's top container, which DIRAC
 * deployments create beforehand. Everything one call asks for is decided and appended in one
 * atomic step: a refusal anywhere leaves the catalogue as it was.
 */

/** One entry of `lfns`, as the API checked it. */
export type DiracFile = Readonly<{
  lfn: string;
  rse: string;
  bytes: number;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  pfn?: string;
  meta: Readonly<Record<string, unknown>>;
}>;

export type DiracRequest = Readonly<{
  files: readonly DiracFile[];
  ignoreAvailability: boolean;
  /** Metadata of the datasets and containers this call creates, by path (Rucio's `parents_metadata`). */
  parentsMetadata: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}>;

/** A new file's own rule (Rucio's): one copy on its RSE for a day, while the dataset's rule takes over. */
const FILE_RULE_LIFETIME = 86_400;

const ruleOptions = (
  account: string,
  rseExpression: string,
  lifetime: number | null,
  grouping: 'DATASET' | 'NONE',
): CollectionRule => ({ ...RULE_REQUEST_DEFAULTS, account, rseExpression, lifetime, grouping });

/** The RSE expression of the rule every new dataset gets: any RSE DIRAC may place data on. */
const ANY_RSE = 'ANY=true';

/** The convention `common.extract_scope` names, else `policy.extract_scope`, else `def` (Rucio's order). */
const scopeConventionOf = (sections: Parameters<typeof settingValue>[0]): ScopeConvention =>
  settingValue(sections, SETTINGS.extractScope) ?? settingValue(sections, SETTINGS.policyExtractScope) ?? 'def';

type Planned = { scope: string; name: string; didType: DidType };
type NewFile = { scope: string; name: string; rse: string };

/**
 * `add_files`: for each LFN not catalogued yet, the file with its replica on its RSE and a rule
 * there for a day; its dataset, created when missing with a rule of one copy on `ANY=true`
 * (grouping NONE, lifetime from `dirac.lifetime`), or else that rule's lifetime renewed; the
 * containers above, created when missing; every new DID attached to its parent. An existing
 * collection of the wrong type, or a missing top container, refuses the whole call.
 */
export const addDiracFiles = async (context: CommandContext, request: DiracRequest, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  const { sections } = await loadConfig(context);
  const convention = scopeConventionOf(sections);
  const lifetimes = parseDiracLifetimes(settingValue(sections, SETTINGS.diracLifetime));
  const scopeOf = (path: string) => extractScope(path, convention);

  // Every LFN must be a DIRAC path before anything is read from it.
  for (const file of request.files) diracHierarchy(file.lfn);
  // Rucio's gateway asks first whether the caller may add DIDs in the files' scopes.
  const checkedScopes = new Set<string>();
  const requireScopeWrite = async (scope: string, path: string) => {
    if (checkedScopes.has(scope)) return;
    if ((await loadScope(context, scope)).status === 'Absent')
      throw new ScopeNotFound(
        `The scope '${scope}' of '${path}' (read by the '${convention}' convention of common.extract_scope) does not exist.`,
      );
    allowOnly(
      DID_PERMISSIONS.writeCollection(await scopeAccess(context, caller, scope)),
      `Account ${caller.account} can not bulk add data identifier.`,
    );
    checkedScopes.add(scope);
  };
  for (const file of request.files) await requireScopeWrite(scopeOf(file.lfn), file.lfn);

  const planned = new Map<string, Planned>();
  const typeOf = async (scope: string, name: string): Promise<DidType | undefined> => {
    const own = planned.get(didKey(scope, name));
    if (own) return own.didType;
    const state = await loadDid(context, scope, name);
    return state.status === 'Live' ? state.record.didType : undefined;
  };
  const collections = new Map<string, NewCollection & { children: AttachRequest[] }>();
  /** Every attachment the call makes, parent first; given to new parents or to existing ones at the end. */
  const edges: { parent: DidRef; child: DidRef }[] = [];
  const addChild = (parent: DidRef, child: DidRef) => edges.push({ parent, child });
  const newCollection = async (scope: string, name: string, didType: CollectionType, rules: CollectionRule[]) => {
    await requireScopeWrite(scope, name);
    planned.set(didKey(scope, name), { scope, name, didType });
    collections.set(didKey(scope, name), {
      scope,
      name,
      didType,
      monotonic: false,
      lifetime: null,
      meta: request.parentsMetadata[name] ?? {},
      children: [],
      ...(rules.length > 0 ? { rules } : {}),
    });
  };
  const registrations = new Map<string, ReplicaFile[]>();
  const newFiles: NewFile[] = [];
  const renewals = new Map<string, number>();

  for (const file of request.files) {
    const scope = scopeOf(file.lfn);
    if ((await typeOf(scope, file.lfn)) !== undefined) continue;
    const { dataset, containers } = diracHierarchy(file.lfn);
    const datasetRef = { scope: scopeOf(dataset), name: dataset };
    const lifetime = diracLifetimeOf(lifetimes, datasetRef.scope);
    const datasetType = await typeOf(datasetRef.scope, dataset);
    if (datasetType !== undefined && datasetType !== 'DATASET')
      throw new UnsupportedOperation(`Cannot create ${dataset} as dataset: it is a ${datasetType.toLowerCase()}.`);
    if (datasetType === undefined) {
      await newCollection(datasetRef.scope, dataset, 'DATASET', [
        ruleOptions(caller.account, ANY_RSE, lifetime, 'NONE'),
      ]);
      addChild({ scope: scopeOf(containers[0]!), name: containers[0]! }, datasetRef);
    } else if (lifetime !== null && !collections.has(didKey(datasetRef.scope, dataset))) {
      const state = await loadDid(context, datasetRef.scope, dataset);
      const ruleId =
        state.status === 'Live'
          ? [...state.rules].find(([, rule]) => rule.account === caller.account && rule.rseExpression === ANY_RSE)?.[0]
          : undefined;
      if (ruleId !== undefined) renewals.set(ruleId, lifetime);
    }

    planned.set(didKey(scope, file.lfn), { scope, name: file.lfn, didType: 'FILE' });
    newFiles.push({ scope, name: file.lfn, rse: file.rse });
    const replica: ReplicaFile = {
      scope,
      name: file.lfn,
      bytes: file.bytes,
      adler32: file.adler32,
      md5: file.md5,
      meta: file.guid ? { ...file.meta, guid: file.guid } : file.meta,
      ...(file.pfn !== undefined ? { pfn: file.pfn } : {}),
    };
    registrations.set(file.rse, [...(registrations.get(file.rse) ?? []), replica]);
    addChild(datasetRef, { scope, name: file.lfn });

    for (const [index, container] of containers.entries()) {
      const containerScope = scopeOf(container);
      const containerType = await typeOf(containerScope, container);
      if (containerType !== undefined && containerType !== 'CONTAINER')
        throw new UnsupportedOperation(
          `Cannot create ${container} as container: it is a ${containerType.toLowerCase()}.`,
        );
      if (containerType !== undefined) continue;
      const parent = containers[index + 1];
      if (parent === undefined)
        throw new DataIdentifierNotFound(
          `The VO's top container ${containerScope}:${container} does not exist: DIRAC deployments create it before adding files.`,
        );
      await newCollection(containerScope, container, 'CONTAINER', []);
      addChild({ scope: scopeOf(parent), name: parent }, { scope: containerScope, name: container });
    }
  }
  const existingParents = new Map<string, DidRef & { children: AttachRequest[] }>();
  for (const { parent, child } of edges) {
    const key = didKey(parent.scope, parent.name);
    const target = collections.get(key) ?? existingParents.get(key);
    if (target) target.children.push(child);
    else existingParents.set(key, { ...parent, children: [child] });
  }
  for (const parent of existingParents.values()) await requireScopeWrite(parent.scope, parent.name);

  const plan =
    registrations.size > 0
      ? await planReplicaRegistrations(
          context,
          caller,
          [...registrations].map(([rse, files]): ReplicaRegistration => ({
            rse,
            files,
            ignoreAvailability: request.ignoreAvailability,
          })),
          metadata,
        )
      : undefined;
  const step = new StepBuilder(metadata);
  for (const file of plan?.commands ?? [])
    for (const command of file.commands) step.onDid(file.scope, file.name, command);

  // Children are decided before their parents: new files first, then collections deepest first.
  const factsOf = (decided: DecidedStates, request: AttachRequest) => {
    const state = decidedDid(decided, request.scope, request.name);
    return { request, facts: state ? childFactsOf(state) : undefined };
  };
  const conventions = await loadConventions(
    context,
    [...collections.values()].flatMap((collection) => Object.keys(collection.meta)),
  );
  const nameSchema = await loadNameSchema(context);
  const depth = (name: string) => name.split('/').length;
  const ordered = [...collections.values()].sort((a, b) => depth(b.name) - depth(a.name));
  for (const collection of ordered) {
    step.onDid(collection.scope, collection.name, (decided): DidStreamCommand[] => [
      {
        type: 'CreateCollection',
        data: {
          ...collection,
          account: caller.account,
          conventions,
          nameSchema,
          children: collection.children.map((child) => factsOf(decided, child)),
        },
        metadata,
      },
    ]);
  }
  for (const parent of existingParents.values()) {
    step.onDid(parent.scope, parent.name, (decided): DidStreamCommand[] => [
      {
        type: 'AttachDids',
        data: {
          scope: parent.scope,
          name: parent.name,
          children: parent.children.map((child) => factsOf(decided, child)),
          ignoreDuplicates: true,
          // The children are new: none of them can be an ancestor of the parent.
          ancestors: new Set(),
        },
        metadata,
      },
    ]);
  }

  const all = [...collections.values()];
  for (const collection of all)
    if (collection.rules) await planCollectionRules(context, step, collection, all, plan, metadata, caller.account);
  for (const file of newFiles) {
    const registered = plan!.registered.get(didKey(file.scope, file.name))!;
    await planRulesOnNewDid(
      context,
      step,
      {
        scope: file.scope,
        name: file.name,
        didType: 'FILE',
        length: 1,
        bytes: registered.bytes,
        closed: true,
        content: {
          kind: 'file',
          file: {
            scope: file.scope,
            name: file.name,
            bytes: registered.bytes,
            replicas: Object.fromEntries(
              Object.entries(registered.replicas).map(([rseId, state]) => [rseId, { state }]),
            ),
          },
        },
      },
      [ruleOptions(caller.account, file.rse, FILE_RULE_LIFETIME, 'DATASET')],
      metadata,
      caller.account,
    );
  }
  for (const [ruleId, lifetime] of renewals)
    step.onRule(ruleId, () => [
      {
        type: 'UpdateRuleOptions',
        data: { ruleId, changes: { expiresAt: new Date(metadata.now.getTime() + lifetime * 1000).toISOString() } },
        metadata,
      },
    ]);
  return { position: lastPosition(await handleCommands(context, step.decisions(), { metadata })) };
};
