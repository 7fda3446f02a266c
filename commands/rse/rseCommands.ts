import { randomUUID } from 'node:crypto';
import { loadCaller } from '../caller.ts';
import { handleCommand, loadState, type Aggregate, type CommandContext } from '../handleCommand.ts';
import { requirePermission, type Caller } from '../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../domain/permission/rsePolicy.ts';
import type { RseProtocol } from '../../domain/rse/protocol.ts';
import type { ProtocolChanges } from '../../domain/rse/protocolInput.ts';
import { evolveRse, initialRse, rseStreamName, type Rse, type RseAttributeValue, type RseEvent, type RseProperties } from '../../domain/rse/rse.ts';
import * as decider from '../../domain/rse/rseDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import type { ReplicaCatalogue } from '../replica/replicaCatalogue.ts';

export const rseAggregate: Aggregate<Rse, RseEvent> = { name: 'rse', initialState: initialRse, evolve: evolveRse };

export const loadRse = async (context: CommandContext, rse: string): Promise<Rse> =>
  (await loadState(context, rseStreamName(rse), rseAggregate)).state;

/** RSE ids look like Rucio's: a uuid4 as 32 lowercase hex digits. */
export const newRseId = (): string => randomUUID().replaceAll('-', '');

type Permission = Readonly<{ allowed: (caller: Caller) => boolean; what: string }>;

/** Checks the caller's right, then decides on the RSE's stream. */
const onRse = async (
  context: CommandContext,
  rse: string,
  metadata: CommandMetadata,
  permission: Permission,
  decide: (state: Rse) => RseEvent[] | Promise<RseEvent[]>,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(permission.allowed(caller), caller, permission.what);
  return handleCommand(context, { streamName: rseStreamName(rse), aggregate: rseAggregate, decide }, { metadata });
};

export const createRse = (context: CommandContext, data: { rse: string; properties: RseProperties }, metadata: CommandMetadata) => {
  const command = { type: 'CreateRse', data: { ...data, rseId: newRseId() }, metadata } as const;
  return onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.addRse, what: 'add RSE' }, (state) => decider.createRse(command, state));
};

export const updateRse = (context: CommandContext, data: { rse: string; changes: Partial<RseProperties> }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.updateRse, what: 'update RSE' }, (state) =>
    decider.updateRse({ type: 'UpdateRse', data, metadata }, state),
  );

/** An RSE holding replicas cannot be deleted; the replica catalogue knows how many bytes it holds. */
export const deleteRse = (
  context: CommandContext,
  data: { rse: string },
  metadata: CommandMetadata,
) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.deleteRse, what: 'delete RSE' }, async (state) =>
    decider.deleteRse({ type: 'DeleteRse', data: { ...data, catalogueBytes: state.status === 'Absent' ? 0 : await context.replicaCatalogue.catalogueBytes(state.id) }, metadata }, state),
  );

export const setRseAttribute = (context: CommandContext, data: { rse: string; key: string; value: RseAttributeValue }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.addAttribute, what: 'add RSE attributes' }, (state) =>
    decider.setRseAttribute({ type: 'SetRseAttribute', data, metadata }, state),
  );

export const removeRseAttribute = (context: CommandContext, data: { rse: string; key: string }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.deleteAttribute, what: 'delete RSE attributes' }, (state) =>
    decider.removeRseAttribute({ type: 'RemoveRseAttribute', data, metadata }, state),
  );

export const addRseProtocol = (context: CommandContext, data: { rse: string; protocol: RseProtocol }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.addProtocol, what: `add protocols to RSE ${data.rse}` }, (state) =>
    decider.addRseProtocol({ type: 'AddRseProtocol', data, metadata }, state),
  );

type ProtocolSelector = { rse: string; scheme: string; hostname?: string; port?: number };

export const updateRseProtocols = (context: CommandContext, data: ProtocolSelector & { changes: ProtocolChanges }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.updateProtocol, what: `update protocols from RSE ${data.rse}` }, (state) =>
    decider.updateRseProtocols({ type: 'UpdateRseProtocols', data, metadata }, state),
  );

export const removeRseProtocols = (context: CommandContext, data: ProtocolSelector, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.deleteProtocol, what: `delete protocols from RSE ${data.rse}` }, (state) =>
    decider.removeRseProtocols({ type: 'RemoveRseProtocols', data, metadata }, state),
  );

export const setRseUsage = (
  context: CommandContext,
  data: { rse: string; source: string; used: number | null; free: number | null; files: number | null },
  metadata: CommandMetadata,
) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.setUsage, what: `update RSE usage information for RSE ${data.rse}` }, (state) =>
    decider.setRseUsage({ type: 'SetRseUsage', data, metadata }, state),
  );

export const setRseLimit = (context: CommandContext, data: { rse: string; name: string; value: number }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.setLimits, what: `update RSE limits for RSE ${data.rse}` }, (state) =>
    decider.setRseLimit({ type: 'SetRseLimit', data, metadata }, state),
  );

export const removeRseLimit = (context: CommandContext, data: { rse: string; name: string }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.deleteLimits, what: `update RSE limits for RSE ${data.rse}` }, (state) =>
    decider.removeRseLimit({ type: 'RemoveRseLimit', data, metadata }, state),
  );

export const addRseQosPolicy = (context: CommandContext, data: { rse: string; policy: string }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.addQosPolicy, what: `add QoS policies to RSE ${data.rse}` }, (state) =>
    decider.addRseQosPolicy({ type: 'AddRseQosPolicy', data, metadata }, state),
  );

export const removeRseQosPolicy = (context: CommandContext, data: { rse: string; policy: string }, metadata: CommandMetadata) =>
  onRse(context, data.rse, metadata, { allowed: RSE_PERMISSIONS.deleteQosPolicy, what: `delete QoS policies from RSE ${data.rse}` }, (state) =>
    decider.removeRseQosPolicy({ type: 'RemoveRseQosPolicy', data, metadata }, state),
  );

/** The destination of a distance must exist too: its id is read from its own stream. */
const destinationOf = async (context: CommandContext, destination: string) => {
  const state = await loadRse(context, destination);
  if (state.status !== 'Active') throw decider.rseNotFound(destination);
  return { destRseId: state.id, destRse: state.rse };
};

type DistanceRequest = { source: string; destination: string; distance: number | null };

export const addRseDistance = async (context: CommandContext, data: DistanceRequest, metadata: CommandMetadata) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(context, data.source, metadata, { allowed: RSE_PERMISSIONS.addDistance, what: 'add RSE distances' }, (state) =>
    decider.addRseDistance({ type: 'AddRseDistance', data: { rse: data.source, ...destination, distance: data.distance }, metadata }, state),
  );
};

export const updateRseDistance = async (context: CommandContext, data: DistanceRequest, metadata: CommandMetadata) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(context, data.source, metadata, { allowed: RSE_PERMISSIONS.updateDistance, what: 'update RSE distances' }, (state) =>
    decider.updateRseDistance({ type: 'UpdateRseDistance', data: { rse: data.source, ...destination, distance: data.distance }, metadata }, state),
  );
};

export const removeRseDistance = async (context: CommandContext, data: { source: string; destination: string }, metadata: CommandMetadata) => {
  const destination = await destinationOf(context, data.destination);
  return onRse(context, data.source, metadata, { allowed: RSE_PERMISSIONS.deleteDistance, what: 'delete RSE distances' }, (state) =>
    decider.removeRseDistance({ type: 'RemoveRseDistance', data: { rse: data.source, ...destination }, metadata }, state),
  );
};
