import { newId } from '../newId.ts';
import { requirePermission, type Caller } from '../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../domain/permission/rsePolicy.ts';
import type { RseProtocol } from '../../domain/rse/protocol.ts';
import type { ProtocolChanges } from '../../domain/rse/protocolInput.ts';
import { rseStreamName, type Rse, type RseAttributeValue, type RseProperties } from '../../domain/rse/rse.ts';
import { rseDecider, rseNotFound, type RseCommand } from '../../domain/rse/rseDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, loadAggregate, type CommandContext } from '../handleCommand.ts';

export const loadRse = (context: CommandContext, rse: string): Promise<Rse> =>
  loadAggregate(context, rseDecider, rseStreamName(rse));

type Permission = Readonly<{ allowed: (caller: Caller) => boolean; what: string }>;

/** Checks the caller's right, then decides on the RSE's stream. */
const onRse = async (context: CommandContext, permission: Permission, command: RseCommand) => {
  const caller = await loadCaller(context, command.metadata.account);
  requirePermission(permission.allowed(caller), caller, permission.what);
  return handleCommand(context, rseDecider, rseStreamName(command.data.rse), command);
};

export const createRse = (
  context: CommandContext,
  data: { rse: string; properties: RseProperties },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.addRse, what: 'add RSE' },
    { type: 'CreateRse', data: { ...data, rseId: newId() }, metadata },
  );

export const updateRse = (
  context: CommandContext,
  data: { rse: string; changes: Partial<RseProperties> },
  metadata: CommandMetadata,
) => onRse(context, { allowed: RSE_PERMISSIONS.updateRse, what: 'update RSE' }, { type: 'UpdateRse', data, metadata });

/** An RSE holding replicas cannot be deleted; the replica catalogue knows how many bytes it holds. */
export const deleteRse = async (context: CommandContext, data: { rse: string }, metadata: CommandMetadata) => {
  const state = await loadRse(context, data.rse);
  const catalogueBytes = state.status === 'Absent' ? 0 : await context.replicaCatalogue.catalogueBytes(state.id);
  return onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteRse, what: 'delete RSE' },
    { type: 'DeleteRse', data: { ...data, catalogueBytes }, metadata },
  );
};

export const setRseAttribute = (
  context: CommandContext,
  data: { rse: string; key: string; value: RseAttributeValue },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.addAttribute, what: 'add RSE attributes' },
    { type: 'SetRseAttribute', data, metadata },
  );

export const removeRseAttribute = (
  context: CommandContext,
  data: { rse: string; key: string },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteAttribute, what: 'delete RSE attributes' },
    { type: 'RemoveRseAttribute', data, metadata },
  );

export const addRseProtocol = (
  context: CommandContext,
  data: { rse: string; protocol: RseProtocol },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.addProtocol, what: `add protocols to RSE ${data.rse}` },
    { type: 'AddRseProtocol', data, metadata },
  );

type ProtocolSelector = { rse: string; scheme: string; hostname?: string; port?: number };

export const updateRseProtocols = (
  context: CommandContext,
  data: ProtocolSelector & { changes: ProtocolChanges },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.updateProtocol, what: `update protocols from RSE ${data.rse}` },
    { type: 'UpdateRseProtocols', data, metadata },
  );

export const removeRseProtocols = (context: CommandContext, data: ProtocolSelector, metadata: CommandMetadata) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteProtocol, what: `delete protocols from RSE ${data.rse}` },
    { type: 'RemoveRseProtocols', data, metadata },
  );

export const setRseUsage = (
  context: CommandContext,
  data: { rse: string; source: string; used: number | null; free: number | null; files: number | null },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.setUsage, what: `update RSE usage information for RSE ${data.rse}` },
    { type: 'SetRseUsage', data, metadata },
  );

export const setRseLimit = (
  context: CommandContext,
  data: { rse: string; name: string; value: number },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.setLimits, what: `update RSE limits for RSE ${data.rse}` },
    { type: 'SetRseLimit', data, metadata },
  );

export const removeRseLimit = (
  context: CommandContext,
  data: { rse: string; name: string },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteLimits, what: `update RSE limits for RSE ${data.rse}` },
    { type: 'RemoveRseLimit', data, metadata },
  );

export const addRseQosPolicy = (
  context: CommandContext,
  data: { rse: string; policy: string },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.addQosPolicy, what: `add QoS policies to RSE ${data.rse}` },
    { type: 'AddRseQosPolicy', data, metadata },
  );

export const removeRseQosPolicy = (
  context: CommandContext,
  data: { rse: string; policy: string },
  metadata: CommandMetadata,
) =>
  onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteQosPolicy, what: `delete QoS policies from RSE ${data.rse}` },
    { type: 'RemoveRseQosPolicy', data, metadata },
  );

/** The destination of a distance must exist too: its id is read from its own stream. */
const destinationOf = async (context: CommandContext, destination: string) => {
  const state = await loadRse(context, destination);
  if (state.status !== 'Active') throw rseNotFound(destination);
  return { destRseId: state.id, destRse: state.rse };
};

type DistanceRequest = { source: string; destination: string; distance: number | null };

export const addRseDistance = async (context: CommandContext, data: DistanceRequest, metadata: CommandMetadata) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(
    context,
    { allowed: RSE_PERMISSIONS.addDistance, what: 'add RSE distances' },
    { type: 'AddRseDistance', data: { rse: data.source, ...destination, distance: data.distance }, metadata },
  );
};

export const updateRseDistance = async (context: CommandContext, data: DistanceRequest, metadata: CommandMetadata) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(
    context,
    { allowed: RSE_PERMISSIONS.updateDistance, what: 'update RSE distances' },
    { type: 'UpdateRseDistance', data: { rse: data.source, ...destination, distance: data.distance }, metadata },
  );
};

export const removeRseDistance = async (
  context: CommandContext,
  data: { source: string; destination: string },
  metadata: CommandMetadata,
) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(
    context,
    { allowed: RSE_PERMISSIONS.deleteDistance, what: 'delete RSE distances' },
    { type: 'RemoveRseDistance', data: { rse: data.source, ...destination }, metadata },
  );
};
