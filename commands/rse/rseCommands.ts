import { newId } from '../newId.ts';
import { requirePermission, type Caller } from '../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../domain/permission/rsePolicy.ts';
import { rseStreamName, type Rse, type RseEvent } from '../../domain/rse/rse.ts';
import { rseDecider, rseNotFound, type RseCommand } from '../../domain/rse/rseDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, loadAggregate, type CommandContext, type CommandOutcome } from '../handleCommand.ts';

export const loadRse = (context: CommandContext, rse: string): Promise<Rse> =>
  loadAggregate(context, rseDecider, rseStreamName(rse));

/** The commands a caller gives one at a time; import decides the others on its own terms. */
type CallerCommandType = Exclude<RseCommand['type'], 'ImportRse' | 'SetRseDistance'>;
type DataOf<Type extends CallerCommandType> = Extract<RseCommand, { type: Type }>['data'];
/**
 * The command of a type, written as a mapped type indexed by its key: TypeScript then sees that a
 * command built from a `Type` and a `DataOf<Type>` is the row of that type in `DECIDE_ON_RSE`.
 */
type CommandOf<Type extends CallerCommandType> = {
  [T in Type]: Readonly<{ type: T; data: DataOf<T>; metadata: CommandMetadata }>;
}[Type];

type RseOutcome = CommandOutcome<Rse, RseEvent>;
type DecideOnRse<C> = (context: CommandContext, command: C) => Promise<RseOutcome>;

/** Checks the caller's right (Rucio's wording of the action names the RSE), then decides on the RSE's stream. */
const guardedBy =
  (allowed: (caller: Caller) => boolean, what: (rse: string) => string): DecideOnRse<RseCommand> =>
  async (context, command) => {
    const caller = await loadCaller(context, command.metadata.account);
    requirePermission(allowed(caller), caller, what(command.data.rse));
    return handleCommand(context, rseDecider, rseStreamName(command.data.rse), command);
  };

/** Who may give each command: one row per command type, which the compiler checks against that type. */
const DECIDE_ON_RSE: { [Type in CallerCommandType]: DecideOnRse<CommandOf<Type>> } = {
  CreateRse: guardedBy(RSE_PERMISSIONS.addRse, () => 'add RSE'),
  UpdateRse: guardedBy(RSE_PERMISSIONS.updateRse, () => 'update RSE'),
  DeleteRse: guardedBy(RSE_PERMISSIONS.deleteRse, () => 'delete RSE'),
  SetRseAttribute: guardedBy(RSE_PERMISSIONS.addAttribute, () => 'add RSE attributes'),
  RemoveRseAttribute: guardedBy(RSE_PERMISSIONS.deleteAttribute, () => 'delete RSE attributes'),
  AddRseProtocol: guardedBy(RSE_PERMISSIONS.addProtocol, (rse) => `add protocols to RSE ${rse}`),
  UpdateRseProtocols: guardedBy(RSE_PERMISSIONS.updateProtocol, (rse) => `update protocols from RSE ${rse}`),
  RemoveRseProtocols: guardedBy(RSE_PERMISSIONS.deleteProtocol, (rse) => `delete protocols from RSE ${rse}`),
  SetRseUsage: guardedBy(RSE_PERMISSIONS.setUsage, (rse) => `update RSE usage information for RSE ${rse}`),
  SetRseLimit: guardedBy(RSE_PERMISSIONS.setLimits, (rse) => `update RSE limits for RSE ${rse}`),
  RemoveRseLimit: guardedBy(RSE_PERMISSIONS.deleteLimits, (rse) => `update RSE limits for RSE ${rse}`),
  AddRseQosPolicy: guardedBy(RSE_PERMISSIONS.addQosPolicy, (rse) => `add QoS policies to RSE ${rse}`),
  RemoveRseQosPolicy: guardedBy(RSE_PERMISSIONS.deleteQosPolicy, (rse) => `delete QoS policies from RSE ${rse}`),
  AddRseDistance: guardedBy(RSE_PERMISSIONS.addDistance, () => 'add RSE distances'),
  UpdateRseDistance: guardedBy(RSE_PERMISSIONS.updateDistance, () => 'update RSE distances'),
  RemoveRseDistance: guardedBy(RSE_PERMISSIONS.deleteDistance, () => 'delete RSE distances'),
};

const decideOnRse = <Type extends CallerCommandType>(
  context: CommandContext,
  type: Type,
  data: DataOf<Type>,
  metadata: CommandMetadata,
): Promise<RseOutcome> => DECIDE_ON_RSE[type](context, { type, data, metadata });

/** The command as the caller gives it: its data as the decider takes it. */
const rseCommand =
  <Type extends CallerCommandType>(type: Type) =>
  (context: CommandContext, data: DataOf<Type>, metadata: CommandMetadata) =>
    decideOnRse(context, type, data, metadata);

export const createRse = (
  context: CommandContext,
  data: Omit<DataOf<'CreateRse'>, 'rseId'>,
  metadata: CommandMetadata,
) => decideOnRse(context, 'CreateRse', { ...data, rseId: newId() }, metadata);

export const updateRse = rseCommand('UpdateRse');

/** An RSE holding replicas cannot be deleted; the replica catalogue knows how many bytes it holds. */
export const deleteRse = async (context: CommandContext, data: { rse: string }, metadata: CommandMetadata) => {
  const state = await loadRse(context, data.rse);
  const catalogueBytes = state.status === 'Absent' ? 0 : await context.replicaCatalogue.catalogueBytes(state.id);
  return decideOnRse(context, 'DeleteRse', { ...data, catalogueBytes }, metadata);
};

export const setRseAttribute = rseCommand('SetRseAttribute');
export const removeRseAttribute = rseCommand('RemoveRseAttribute');
export const addRseProtocol = rseCommand('AddRseProtocol');
export const updateRseProtocols = rseCommand('UpdateRseProtocols');
export const removeRseProtocols = rseCommand('RemoveRseProtocols');
export const setRseUsage = rseCommand('SetRseUsage');
export const setRseLimit = rseCommand('SetRseLimit');
export const removeRseLimit = rseCommand('RemoveRseLimit');
export const addRseQosPolicy = rseCommand('AddRseQosPolicy');
export const removeRseQosPolicy = rseCommand('RemoveRseQosPolicy');

/** The destination of a distance must exist too: its id is read from its own stream. */
const destinationOf = async (context: CommandContext, destination: string) => {
  const state = await loadRse(context, destination);
  if (state.status !== 'Active') throw rseNotFound(destination);
  return { destRseId: state.id, destRse: state.rse };
};

type DistanceRequest = { source: string; destination: string; distance: number | null };

/** Adding a distance and changing one take the same request. */
const setRseDistance =
  (type: 'AddRseDistance' | 'UpdateRseDistance') =>
  async (context: CommandContext, data: DistanceRequest, metadata: CommandMetadata) => {
    const destination = await destinationOf(context, data.destination);
    return decideOnRse(context, type, { rse: data.source, ...destination, distance: data.distance }, metadata);
  };

export const addRseDistance = setRseDistance('AddRseDistance');
export const updateRseDistance = setRseDistance('UpdateRseDistance');

export const removeRseDistance = async (
  context: CommandContext,
  data: Omit<DistanceRequest, 'distance'>,
  metadata: CommandMetadata,
) => {
  const destination = await destinationOf(context, data.destination);
  return decideOnRse(context, 'RemoveRseDistance', { rse: data.source, ...destination }, metadata);
};
