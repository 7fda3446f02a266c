import { didKey } from '../../domain/did/did.ts';
import { allowOnly, type Caller } from '../../domain/permission/policy.ts';
import { REPLICA_PERMISSIONS } from '../../domain/permission/replicaPolicy.ts';
import type { DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import {
  planReplicas,
  type PlannedReplica,
  type RegistrationRse,
  type ReplicaFile,
} from '../../domain/replica/replicaRegistration.ts';
import type { ReplicaState } from '../../domain/replica/replica.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { loadConfig } from '../config/configCommands.ts';
import type { DidWriteOutcome } from '../did/didCreationCommands.ts';
import { onDidStream, type DidDecision } from '../did/didStreams.ts';
import { prepareFileRegistration } from '../did/fileRegistration.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';

/** Replicas to register on one RSE, as `add_replicas` receives them. */
export type ReplicaRegistration = Readonly<{ rse: string; files: readonly ReplicaFile[]; ignoreAvailability: boolean }>;

/** Config `policy.lfn2pfn_algorithm_default`, else `hash`. */
export const defaultLfn2pfnAlgorithm = async (context: CommandContext): Promise<string> =>
  settingValue((await loadConfig(context)).sections, SETTINGS.lfn2pfnDefault);

/** The facts registration needs of an RSE, from its own stream: it must exist and not be deleted. */
export const loadRegistrationRse = async (
  context: CommandContext,
  rse: string,
  defaultAlgorithm: string,
): Promise<RegistrationRse> => {
  const state = await loadRse(context, rse);
  if (state.status !== 'Active') throw rseNotFound(rse);
  const algorithm = state.attributes.lfn2pfn_algorithm;
  return {
    rse: state.rse,
    rseId: state.id,
    volatile: state.properties.volatile,
    deterministic: state.properties.deterministic,
    availabilityWrite: state.properties.availability_write,
    lfn2pfnAlgorithm: typeof algorithm === 'string' && algorithm ? algorithm : defaultAlgorithm,
    protocols: state.protocols,
    tombstoneDelay: state.attributes.tombstone_delay,
  };
};

export type RegistrationPlan = Readonly<{
  decisions: DidDecision[];
  /** The same as commands per file stream, for steps that add more to those streams. */
  commands: readonly Readonly<{ scope: string; name: string; commands: readonly DidStreamCommand[] }>[];
  /** `scope:name` of every file the plan registers. */
  files: ReadonlySet<string>;
  /** Per file, the RSE ids it gets a replica on (AVAILABLE unless registered otherwise) and its size. */
  registered: ReadonlyMap<string, Readonly<{ bytes: number; replicas: Readonly<Record<string, ReplicaState>> }>>;
}>;

type Target = Readonly<{ rse: RegistrationRse; file: ReplicaFile; planned: PlannedReplica }>;

/**
 * Everything needed to register replicas inside a larger atomic step (attach or `add_dids` with
 * an RSE) or on their own: permission per RSE, the RSE's checks once per request, the files'
 * scopes, owners and metadata conventions. Returns one decision per file stream that creates the
 * file when missing (the first description of a file wins) and adds a replica on each RSE that
 * does not have one yet. Decisions that follow in the same step read the files' new states through
 * `DecidedStates` (`decidedDid`).
 */
export const planReplicaRegistrations = async (
  context: CommandContext,
  caller: Caller,
  registrations: readonly ReplicaRegistration[],
  metadata: CommandMetadata,
): Promise<RegistrationPlan> => {
  for (const { rse } of registrations) {
    allowOnly(
      REPLICA_PERMISSIONS.addReplicas(caller, rse),
      `Account ${caller.account} can not add file replicas on ${rse}.`,
    );
  }
  const defaultAlgorithm = await defaultLfn2pfnAlgorithm(context);
  const skipAvailability = REPLICA_PERMISSIONS.skipAvailabilityCheck(caller);
  const byFile = new Map<string, { file: ReplicaFile; targets: Target[] }>();
  for (const registration of registrations) {
    const rse = await loadRegistrationRse(context, registration.rse, defaultAlgorithm);
    const planned = planReplicas(rse, registration.files, {
      ignoreAvailability: registration.ignoreAvailability && skipAvailability,
      now: metadata.now,
    });
    for (const file of registration.files) {
      const key = didKey(file.scope, file.name);
      const entry = byFile.get(key) ?? { file, targets: [] };
      entry.targets.push({ rse, file, planned: planned.get(key)! });
      byFile.set(key, entry);
    }
  }
  const registerFile = await prepareFileRegistration(
    context,
    [...byFile.values()].map((entry) => entry.file),
    metadata,
  );
  const commands = [...byFile.values()].map(({ file, targets }) => {
    const addReplicas = targets.map(({ rse, file: described, planned }): DidStreamCommand => ({
      type: 'AddReplica',
      data: {
        scope: file.scope,
        name: file.name,
        rse: rse.rse,
        rseId: rse.rseId,
        bytes: described.bytes,
        md5: described.md5 ?? null,
        adler32: described.adler32 ?? null,
        ...planned,
      },
      metadata,
    }));
    return { scope: file.scope, name: file.name, commands: [registerFile(file), ...addReplicas] };
  });
  const registered = new Map(
    [...byFile].map(([key, { file, targets }]) => [
      key,
      {
        bytes: file.bytes,
        replicas: Object.fromEntries(targets.map(({ rse, planned }) => [rse.rseId, planned.state])),
      },
    ]),
  );
  return {
    decisions: commands.map((entry) => onDidStream(entry.scope, entry.name, entry.commands)),
    commands,
    files: new Set(byFile.keys()),
    registered,
  };
};

/** `add_replicas`: registers the replicas of one RSE, creating missing files, in one atomic step. */
export const addReplicas = async (
  context: CommandContext,
  registration: ReplicaRegistration,
  metadata: CommandMetadata,
): Promise<DidWriteOutcome> => {
  const caller = await loadCaller(context, metadata.account);
  const plan = await planReplicaRegistrations(context, caller, [registration], metadata);
  return { position: lastPosition(await handleCommands(context, plan.decisions, { metadata })) };
};
