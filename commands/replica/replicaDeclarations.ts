import { didKey, type DidRef } from '../../domain/did/did.ts';
import { allowOnly, type Caller } from '../../domain/permission/policy.ts';
import { REPLICA_PERMISSIONS } from '../../domain/permission/replicaPolicy.ts';
import {
  declarationReport,
  type DeclareReplicaBad,
  type DeclareReplicaSuspicious,
  type DeclareReplicaTemporarilyUnavailable,
  type ReplicaTarget,
} from '../../domain/replica/replicaStates.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import { InputValidationError, InvalidType, ReplicaNotFound, RSENotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { onDidStream } from '../did/didStreams.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { resolvePfns } from './pfnResolution.ts';
import { loadRse } from '../rse/rseCommands.ts';

/** A replica named in a declaration: a PFN, or a DID with the RSE by name or id. */
export type DeclaredReplica = string | Readonly<{ scope: string; name: string; rse?: string; rseId?: string }>;

/** What could not be declared, by RSE name (`unknown` for PFNs no RSE serves). */
export type NotDeclared = Record<string, string[]>;

type Target = Readonly<{ rse: { rse: string; rseId: string }; label: string; did: DidRef | undefined }>;

type Declaration = 'BAD' | 'SUSPICIOUS';

/** One declaration of one target, as a replica command (the target names an existing file). */
type Declare = (target: ReplicaTarget) => DeclarationCommand;

type DeclarationCommand = DeclareReplicaBad | DeclareReplicaSuspicious | DeclareReplicaTemporarilyUnavailable;

/** Declares each target on its file's stream, all in one atomic step; returns why some were not. */
const declareTargets = async (
  context: CommandContext,
  targets: readonly Target[],
  declare: Declare,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; reasons: Map<Target, string> }> => {
  const reasons = new Map<Target, string>();
  const byFile = new Map<string, Target[]>();
  for (const target of targets) {
    if (!target.did) {
      reasons.set(target, 'Unknown replica');
      continue;
    }
    const key = didKey(target.did.scope, target.did.name);
    const sameFile = byFile.get(key);
    if (sameFile) sameFile.push(target);
    else byFile.set(key, [target]);
  }
  const files = [...byFile.values()].map((fileTargets) => {
    const { scope, name } = fileTargets[0]!.did!;
    return { targets: fileTargets, commands: fileTargets.map((target) => declare({ scope, name, ...target.rse })) };
  });
  const outcomes = await handleCommands(
    context,
    files.map(({ targets: [first], commands }) => onDidStream(first!.did!.scope, first!.did!.name, commands)),
    { metadata },
  );
  files.forEach((file, index) => {
    const report = declarationReport(outcomes[index]!.previousState, file.commands);
    file.targets.forEach((target, position) => {
      const why = report[position];
      if (why) reasons.set(target, why);
    });
  });
  return { position: lastPosition(outcomes), reasons };
};

const activeRse = async (context: CommandContext, rse: string) => {
  const state = await loadRse(context, rse);
  if (state.status !== 'Active') throw rseNotFound(rse);
  return { rse: state.rse, rseId: state.id };
};

/** The targets of a declaration given as PFNs or as DIDs with their RSE (never both). */
const targetsOf = async (
  context: CommandContext,
  replicas: readonly DeclaredReplica[],
): Promise<{ targets: Target[]; unknownPfns: readonly string[] }> => {
  const pfns = replicas.filter((replica) => typeof replica === 'string');
  const dids = replicas.filter((replica) => typeof replica !== 'string');
  if (pfns.length > 0 && dids.length > 0) {
    throw new InvalidType('The replicas must be specified either as a list of PFNs (strings) or list of dicts');
  }
  if (pfns.length > 0) {
    const resolution = await resolvePfns(context.replicaCatalogue, pfns);
    const targets = [...resolution.byRse.values()].flatMap(({ rse, pfns }) =>
      pfns.map(({ pfn, did }) => ({ rse: { rse: rse.rse, rseId: rse.id }, label: pfn, did })),
    );
    return { targets, unknownPfns: resolution.unknown };
  }
  const targets: Target[] = [];
  for (const replica of dids) {
    let rse;
    if (replica.rseId !== undefined) {
      const found = await context.replicaCatalogue.rseById(replica.rseId);
      if (!found) throw new RSENotFound(`RSE with id '${replica.rseId}' cannot be found`);
      rse = { rse: found.rse, rseId: found.id };
    } else rse = await activeRse(context, replica.rse!);
    targets.push({
      rse,
      label: `('${replica.scope}', '${replica.name}')`,
      did: { scope: replica.scope, name: replica.name },
    });
  }
  return { targets, unknownPfns: [] };
};

const declarer =
  (declaration: Declaration, reason: string | null, force: boolean, metadata: CommandMetadata): Declare =>
  (target) =>
    declaration === 'SUSPICIOUS'
      ? { type: 'DeclareReplicaSuspicious', data: { ...target, reason }, metadata }
      : { type: 'DeclareReplicaBad', data: { ...target, reason, force }, metadata };

const reportByRse = (
  targets: readonly Target[],
  reasons: ReadonlyMap<Target, string>,
  unknownPfns: readonly string[],
): NotDeclared => {
  const report: NotDeclared = unknownPfns.length > 0 ? { unknown: [...unknownPfns] } : {};
  for (const target of targets) {
    const why = reasons.get(target);
    if (why) (report[target.rse.rse] ??= []).push(`${target.label} ${why}`);
  }
  return report;
};

/**
 * Rucio's `declare_bad_file_replicas` (BAD: root only, on every RSE concerned; every PFN must be
 * known) and `declare_suspicious_file_replicas` (anyone; unknown PFNs are reported). What was
 * not declared comes back by RSE: "Unknown replica", "Already declared".
 */
export const declareReplicas = async (
  context: CommandContext,
  data: { replicas: readonly DeclaredReplica[]; reason: string | null; force: boolean; declaration: Declaration },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; notDeclared: NotDeclared }> => {
  const caller = await loadCaller(context, metadata.account);
  if (data.declaration === 'SUSPICIOUS') {
    allowOnly(
      REPLICA_PERMISSIONS.declareSuspicious(caller),
      `Account ${caller.account} can not declare suspicious replicas.`,
    );
  }
  if (data.replicas.length === 0) return { position: undefined, notDeclared: {} };
  const { targets, unknownPfns } = await targetsOf(context, data.replicas);
  if (data.declaration === 'BAD') {
    if (unknownPfns.length > 0) throw new ReplicaNotFound('Not all replicas found');
    for (const rse of new Set(targets.map((target) => target.rse.rse))) {
      allowOnly(
        REPLICA_PERMISSIONS.declareBad(caller),
        `Account ${caller.account} can not declare bad replicas in RSE ${rse}.`,
      );
    }
  }
  const { position, reasons } = await declareTargets(
    context,
    targets,
    declarer(data.declaration, data.reason, data.force, metadata),
    metadata,
  );
  return { position, notDeclared: reportByRse(targets, reasons, unknownPfns) };
};

const requireDeclarer = (caller: Caller, what: string): void =>
  allowOnly(REPLICA_PERMISSIONS.declareBad(caller), `Account ${caller.account} can not declare bad ${what}.`);

/** Rucio's `add_bad_dids` (root only): the DIDs' replicas on one RSE become BAD. */
export const declareBadDids = async (
  context: CommandContext,
  data: { dids: readonly DidRef[]; rse: string; reason: string | null },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; notDeclared: string[] }> => {
  const caller = await loadCaller(context, metadata.account);
  requireDeclarer(caller, 'PFN or DIDs');
  const rse = await activeRse(context, data.rse);
  const targets = data.dids.map((did) => ({ rse, label: didKey(did.scope, did.name), did }));
  const { position, reasons } = await declareTargets(
    context,
    targets,
    declarer('BAD', data.reason, false, metadata),
    metadata,
  );
  return {
    position,
    notDeclared: targets.flatMap((target) => (reasons.has(target) ? [`${target.label} ${reasons.get(target)}`] : [])),
  };
};

export type BadPfnState = 'BAD' | 'SUSPICIOUS' | 'TEMPORARY_UNAVAILABLE';

/** Longest a temporary unavailability may be declared for (Rucio's gateway limit). */
const MAX_UNAVAILABILITY_DAYS = 30;

/**
 * Rucio's `add_bad_pfns` (root only), applied at once instead of queued for the minos daemon:
 * BAD and SUSPICIOUS go through the declarations above; TEMPORARY_UNAVAILABLE (which needs an
 * expiry at most 30 days ahead, and only BAD forbids one) makes readable replicas unreadable
 * until it, skipping those already unreadable and expiries already past, as minos does. Every PFN
 * must name a registered replica, or nothing is declared.
 */
export const declareBadPfns = async (
  context: CommandContext,
  data: { pfns: readonly string[]; state: BadPfnState; reason: string | null; expiresAt: Date | undefined },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined }> => {
  const caller = await loadCaller(context, metadata.account);
  requireDeclarer(caller, 'PFNs');
  const { now } = metadata;
  if (data.state === 'TEMPORARY_UNAVAILABLE' && !data.expiresAt) {
    throw new InputValidationError('When adding a TEMPORARY UNAVAILABLE pfn the expires_at value should be set.');
  }
  if (data.state === 'BAD' && data.expiresAt)
    throw new InputValidationError("When adding a BAD pfn the expires_at value shouldn't be set.");
  const limit = now.getTime() + MAX_UNAVAILABILITY_DAYS * 86_400_000;
  if (data.expiresAt && data.expiresAt.getTime() > limit) {
    const days = Math.floor((data.expiresAt.getTime() - now.getTime()) / 86_400_000);
    throw new InputValidationError(
      `The given duration of ${days} days exceeds the maximum duration of ${MAX_UNAVAILABILITY_DAYS} days.`,
    );
  }
  if (data.pfns.length === 0) return { position: undefined };
  const { targets, unknownPfns } = await targetsOf(context, data.pfns);
  if (unknownPfns.length > 0 || targets.some((target) => !target.did))
    throw new ReplicaNotFound('Not all replicas found');
  if (data.state !== 'TEMPORARY_UNAVAILABLE') {
    const { position } = await declareTargets(
      context,
      targets,
      declarer(data.state, data.reason, false, metadata),
      metadata,
    );
    return { position };
  }
  if (data.expiresAt!.getTime() < now.getTime()) return { position: undefined };
  const expiresAt = data.expiresAt!.toISOString();
  const { position } = await declareTargets(
    context,
    targets,
    (target) => ({
      type: 'DeclareReplicaTemporarilyUnavailable',
      data: { ...target, reason: data.reason, expiresAt },
      metadata,
    }),
    metadata,
  );
  return { position };
};
