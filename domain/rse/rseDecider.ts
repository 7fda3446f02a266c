import { decideSteps, unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command, CommandMetadata } from '../shared/event.ts';
import {
  Duplicate,
  RSEAttributeNotFound,
  RSENotFound,
  RSEOperationNotSupported,
  RSEProtocolNotSupported,
} from '../shared/errors.ts';
import { sameProtocolKey, type ProtocolKey, type RseProtocol } from './protocol.ts';
import {
  applyProtocolChanges,
  protocolChangesFromRequest,
  protocolFromRequest,
  type ProtocolChanges,
  type ProtocolRequest,
} from './protocolInput.ts';
import {
  RSE_SETTING_ATTRIBUTES,
  evolveRse,
  newRseRecord,
  initialRse,
  type Rse,
  type RseAttributeValue,
  type RseEvent,
  type RseProperties,
  type RseRecord,
} from './rse.ts';
import { keysOf } from '../shared/narrowing.ts';

export type CreateRse = Command<'CreateRse', { rseId: string; rse: string; properties: RseProperties }>;
export type UpdateRse = Command<'UpdateRse', { rse: string; changes: Partial<RseProperties> }>;
/** `catalogueBytes`: the bytes of the replicas on the RSE, counted by the replica read models. */
export type DeleteRse = Command<'DeleteRse', { rse: string; catalogueBytes: number }>;
export type SetRseAttribute = Command<'SetRseAttribute', { rse: string; key: string; value: RseAttributeValue }>;
export type RemoveRseAttribute = Command<'RemoveRseAttribute', { rse: string; key: string }>;
export type AddRseProtocol = Command<'AddRseProtocol', { rse: string; protocol: RseProtocol }>;
/** Hostname and port narrow the match when given; every matching protocol changes. */
export type UpdateRseProtocols = Command<
  'UpdateRseProtocols',
  { rse: string; scheme: string; hostname?: string; port?: number; changes: ProtocolChanges }
>;
export type RemoveRseProtocols = Command<
  'RemoveRseProtocols',
  { rse: string; scheme: string; hostname?: string; port?: number }
>;
export type SetRseUsage = Command<
  'SetRseUsage',
  { rse: string; source: string; used: number | null; free: number | null; files: number | null }
>;
export type SetRseLimit = Command<'SetRseLimit', { rse: string; name: string; value: number }>;
export type RemoveRseLimit = Command<'RemoveRseLimit', { rse: string; name: string }>;
export type AddRseQosPolicy = Command<'AddRseQosPolicy', { rse: string; policy: string }>;
export type RemoveRseQosPolicy = Command<'RemoveRseQosPolicy', { rse: string; policy: string }>;
/** The destination's existence is a fact the command handler checks before deciding. */
export type AddRseDistance = Command<
  'AddRseDistance',
  { rse: string; destRseId: string; destRse: string; distance: number | null }
>;
export type UpdateRseDistance = Command<
  'UpdateRseDistance',
  { rse: string; destRseId: string; destRse: string; distance: number | null }
>;
export type RemoveRseDistance = Command<'RemoveRseDistance', { rse: string; destRseId: string; destRse: string }>;
/** Adds the distance, or updates it when the RSE has one to that destination already (import). */
export type SetRseDistance = Command<
  'SetRseDistance',
  { rse: string; destRseId: string; destRse: string; distance: number | null }
>;
/**
 * `POST /import` for one RSE: a new RSE is created (with `rseId` and `properties`), an existing
 * one edited (`changes`); then its protocols are added or updated, its `MinFreeSpace` limit and
 * attributes set. Nothing is removed (Rucio's default `edit` synchronisation); a deleted RSE's
 * name cannot be imported again.
 */
export type ImportRse = Command<
  'ImportRse',
  {
    rseId: string;
    rse: string;
    properties: RseProperties;
    changes: Partial<RseProperties>;
    attributes: Readonly<Record<string, RseAttributeValue>>;
    /**
     * Each protocol's key and typed request: a missing protocol is added from the whole request
     * (whether it is whole, impl given, depends on the RSE's state), a known one updated with
     * what it names besides its key.
     */
    protocols: readonly Readonly<{ key: ProtocolKey; request: ProtocolRequest }>[];
    minFreeSpace: number | null;
  }
>;

export type RseCommand =
  | CreateRse
  | UpdateRse
  | DeleteRse
  | SetRseAttribute
  | RemoveRseAttribute
  | AddRseProtocol
  | UpdateRseProtocols
  | RemoveRseProtocols
  | SetRseUsage
  | SetRseLimit
  | RemoveRseLimit
  | AddRseQosPolicy
  | RemoveRseQosPolicy
  | AddRseDistance
  | UpdateRseDistance
  | RemoveRseDistance
  | SetRseDistance
  | ImportRse;

/** Rucio's message for a name it cannot resolve (core/rse.py get_rse_id). */
export const rseNotFound = (rse: string) => new RSENotFound(`RSE '${rse}' cannot be found in vo 'def'`);

type ActiveRse = RseRecord & { status: 'Active' };

/** Every command but creation works on an existing, not deleted RSE. */
export const requireActive = (state: Rse, rse: string): ActiveRse => {
  if (state.status !== 'Active') throw rseNotFound(rse);
  return state;
};

const ref = (state: RseRecord) => ({ rseId: state.id, rse: state.rse });

/** Setting attributes carry the value of the record; an empty value removes the attribute. */
const settingAttributeEvents = (state: RseRecord, changes: Partial<RseProperties>): RseEvent[] =>
  RSE_SETTING_ATTRIBUTES.flatMap((key): RseEvent[] => {
    if (!(key in changes)) return [];
    const value = changes[key];
    if (value)
      return state.attributes[key] === value ? [] : [{ type: 'RseAttributeSet', data: { ...ref(state), key, value } }];
    return Object.hasOwn(state.attributes, key) ? [{ type: 'RseAttributeRemoved', data: { ...ref(state), key } }] : [];
  });

/**
 * Creates an RSE. Rucio then gives it an attribute named after itself (so the bare name is an
 * RSE expression), copies its geographic settings into attributes and starts its `rucio` usage
 * counter at zero. A deleted RSE's name stays taken.
 */
export const createRse = ({ data, metadata }: CreateRse, state: Rse): RseEvent[] => {
  if (state.status !== 'Absent') throw new Duplicate(`RSE '${data.rse}' already exists!`);
  const at = metadata.now.toISOString();
  const rseRef = { rseId: data.rseId, rse: data.rse };
  const created = newRseRecord(data.rseId, data.rse, data.properties);
  return [
    { type: 'RseCreated', data: { ...rseRef, properties: data.properties, createdAt: at } },
    { type: 'RseAttributeSet', data: { ...rseRef, key: data.rse, value: true } },
    ...settingAttributeEvents(created, data.properties),
    { type: 'RseUsageSet', data: { ...rseRef, source: 'rucio', used: 0, free: null, files: 0, updatedAt: at } },
  ];
};

/** Only the properties that differ are recorded; nothing differs, nothing happens. */
export const updateRse = ({ data, metadata }: UpdateRse, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const changes = { ...data.changes };
  for (const key of keysOf(changes)) if (rse.properties[key] === changes[key]) delete changes[key];
  if (Object.keys(changes).length === 0) return [];
  return [
    { type: 'RseUpdated', data: { ...ref(rse), changes, updatedAt: metadata.now.toISOString() } },
    ...settingAttributeEvents(rse, changes),
  ];
};

/**
 * Deletion disables: the RSE leaves listings and expressions, but only once it holds no data:
 * neither replicas in the catalogue nor a `rucio` counter set on its stream.
 */
export const deleteRse = ({ data, metadata }: DeleteRse, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (data.catalogueBytes !== 0 || (rse.usage.rucio?.used ?? 0) !== 0)
    throw new RSEOperationNotSupported(`RSE '${rse.rse}' is not empty`);
  const nameAttribute: RseEvent[] =
    rse.rse in rse.attributes ? [{ type: 'RseAttributeRemoved', data: { ...ref(rse), key: rse.rse } }] : [];
  return [{ type: 'RseDeleted', data: { ...ref(rse), deletedAt: metadata.now.toISOString() } }, ...nameAttribute];
};

/** Setting an attribute replaces its value (Rucio merges); the same value again changes nothing. */
export const setRseAttribute = ({ data }: SetRseAttribute, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (rse.attributes[data.key] === data.value) return [];
  return [{ type: 'RseAttributeSet', data: { ...ref(rse), key: data.key, value: data.value } }];
};

export const removeRseAttribute = ({ data }: RemoveRseAttribute, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (!(data.key in rse.attributes)) throw new RSEAttributeNotFound(`RSE attribute '${data.key}' cannot be found`);
  return [{ type: 'RseAttributeRemoved', data: { ...ref(rse), key: data.key } }];
};

export const addRseProtocol = ({ data }: AddRseProtocol, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const { scheme, hostname, port } = data.protocol;
  if (rse.protocols.some((protocol) => sameProtocolKey(protocol, data.protocol))) {
    throw new Duplicate(
      `Protocol '${scheme}' on port ${port} already registered for  '${rse.rse}' with hostname '${hostname}'.`,
    );
  }
  return [{ type: 'RseProtocolAdded', data: { ...ref(rse), protocol: data.protocol } }];
};

const matchingProtocols = (
  rse: RseRecord,
  key: { scheme: string; hostname?: string | undefined; port?: number | undefined },
): RseProtocol[] =>
  rse.protocols.filter(
    (protocol) =>
      protocol.scheme === key.scheme &&
      (key.hostname === undefined || protocol.hostname === key.hostname) &&
      (key.hostname === undefined || key.port === undefined || protocol.port === key.port),
  );

const protocolNotSupported = (rse: RseRecord, key: Partial<ProtocolKey> & { scheme: string }) =>
  new RSEProtocolNotSupported(
    `RSE '${rse.rse}' does not support protocol '${key.scheme}'` +
      (key.hostname ? ` for hostname '${key.hostname}'` : '') +
      (key.hostname && key.port ? ` on port '${key.port}'` : ''),
  );

export const updateRseProtocols = ({ data }: UpdateRseProtocols, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const matches = matchingProtocols(rse, data);
  if (matches.length === 0) throw protocolNotSupported(rse, data);
  return matches.map((protocol) => ({
    type: 'RseProtocolUpdated',
    data: { ...ref(rse), protocol: applyProtocolChanges(protocol, data.changes) },
  }));
};

export const removeRseProtocols = ({ data }: RemoveRseProtocols, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const matches = matchingProtocols(rse, data);
  if (matches.length === 0) throw protocolNotSupported(rse, data);
  return matches.map(({ scheme, hostname, port }) => ({
    type: 'RseProtocolRemoved',
    data: { ...ref(rse), scheme, hostname, port },
  }));
};

/** Usage per source is replaced whole, missing numbers included (Rucio merges the row). */
export const setRseUsage = ({ data, metadata }: SetRseUsage, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const { source, used, free, files } = data;
  return [
    { type: 'RseUsageSet', data: { ...ref(rse), source, used, free, files, updatedAt: metadata.now.toISOString() } },
  ];
};

export const setRseLimit = ({ data }: SetRseLimit, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (rse.limits[data.name] === data.value) return [];
  return [{ type: 'RseLimitSet', data: { ...ref(rse), name: data.name, value: data.value } }];
};

/** Removing a limit that is not set is no error in Rucio. */
export const removeRseLimit = ({ data }: RemoveRseLimit, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  return data.name in rse.limits ? [{ type: 'RseLimitRemoved', data: { ...ref(rse), name: data.name } }] : [];
};

export const addRseQosPolicy = ({ data }: AddRseQosPolicy, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (rse.qosPolicies.includes(data.policy)) throw new Duplicate(`QoS policy ${data.policy} already exists!`);
  return [{ type: 'RseQosPolicyAdded', data: { ...ref(rse), policy: data.policy } }];
};

export const removeRseQosPolicy = ({ data }: RemoveRseQosPolicy, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  return rse.qosPolicies.includes(data.policy)
    ? [{ type: 'RseQosPolicyRemoved', data: { ...ref(rse), policy: data.policy } }]
    : [];
};

const distanceSet = (rse: RseRecord, data: AddRseDistance['data'], metadata: CommandMetadata): RseEvent => ({
  type: 'RseDistanceSet',
  data: {
    ...ref(rse),
    destRseId: data.destRseId,
    destRse: data.destRse,
    distance: data.distance,
    at: metadata.now.toISOString(),
  },
});

export const addRseDistance = ({ data, metadata }: AddRseDistance, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (data.destRseId in rse.distances)
    throw new Duplicate(`Distance from ${rse.rse} to ${data.destRse} already exists!`);
  return [distanceSet(rse, data, metadata)];
};

/** Rucio updates with a plain UPDATE: a distance that does not exist stays absent, silently. */
export const updateRseDistance = ({ data, metadata }: UpdateRseDistance, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  const existing = rse.distances[data.destRseId];
  if (!existing || existing.distance === data.distance) return [];
  return [distanceSet(rse, data, metadata)];
};

export const removeRseDistance = ({ data }: RemoveRseDistance, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  if (!(data.destRseId in rse.distances)) return [];
  return [{ type: 'RseDistanceRemoved', data: { ...ref(rse), destRseId: data.destRseId, destRse: data.destRse } }];
};

export const setRseDistance = ({ data, metadata }: SetRseDistance, state: Rse): RseEvent[] => {
  const rse = requireActive(state, data.rse);
  return data.destRseId in rse.distances
    ? updateRseDistance({ type: 'UpdateRseDistance', data, metadata }, state)
    : addRseDistance({ type: 'AddRseDistance', data, metadata }, state);
};

export const importRse = ({ data, metadata }: ImportRse, state: Rse): RseEvent[] => {
  const { rse } = data;
  if (state.status === 'Deleted') throw new Duplicate(`RSE '${rse}' already exists!`);
  const steps: ((current: Rse) => RseEvent[])[] = [
    (current) =>
      current.status === 'Absent'
        ? createRse(
            { type: 'CreateRse', data: { rseId: data.rseId, rse, properties: data.properties }, metadata },
            current,
          )
        : updateRse({ type: 'UpdateRse', data: { rse, changes: data.changes }, metadata }, current),
    ...data.protocols.map(({ key, request }) => (current: Rse) => {
      if (!requireActive(current, rse).protocols.some((known) => sameProtocolKey(known, key))) {
        return addRseProtocol(
          { type: 'AddRseProtocol', data: { rse, protocol: protocolFromRequest(key.scheme, request) }, metadata },
          current,
        );
      }
      return updateRseProtocols(
        {
          type: 'UpdateRseProtocols',
          data: { rse, ...key, changes: protocolChangesFromRequest(request, key.scheme) },
          metadata,
        },
        current,
      );
    }),
    ...(data.minFreeSpace
      ? [
          (current: Rse) =>
            setRseLimit(
              { type: 'SetRseLimit', data: { rse, name: 'MinFreeSpace', value: data.minFreeSpace! }, metadata },
              current,
            ),
        ]
      : []),
    ...Object.entries(data.attributes).map(
      ([key, value]) =>
        (current: Rse) =>
          setRseAttribute({ type: 'SetRseAttribute', data: { rse, key, value }, metadata }, current),
    ),
  ];
  return decideSteps<Rse, RseEvent>(evolveRse, steps, state).events;
};

export const decideRse = (command: RseCommand, state: Rse): RseEvent[] => {
  switch (command.type) {
    case 'CreateRse':
      return createRse(command, state);
    case 'UpdateRse':
      return updateRse(command, state);
    case 'DeleteRse':
      return deleteRse(command, state);
    case 'SetRseAttribute':
      return setRseAttribute(command, state);
    case 'RemoveRseAttribute':
      return removeRseAttribute(command, state);
    case 'AddRseProtocol':
      return addRseProtocol(command, state);
    case 'UpdateRseProtocols':
      return updateRseProtocols(command, state);
    case 'RemoveRseProtocols':
      return removeRseProtocols(command, state);
    case 'SetRseUsage':
      return setRseUsage(command, state);
    case 'SetRseLimit':
      return setRseLimit(command, state);
    case 'RemoveRseLimit':
      return removeRseLimit(command, state);
    case 'AddRseQosPolicy':
      return addRseQosPolicy(command, state);
    case 'RemoveRseQosPolicy':
      return removeRseQosPolicy(command, state);
    case 'AddRseDistance':
      return addRseDistance(command, state);
    case 'UpdateRseDistance':
      return updateRseDistance(command, state);
    case 'RemoveRseDistance':
      return removeRseDistance(command, state);
    case 'SetRseDistance':
      return setRseDistance(command, state);
    case 'ImportRse':
      return importRse(command, state);
    default:
      return unknownCommand('RSE', command);
  }
};

export const rseDecider: Decider<Rse, RseCommand, RseEvent> = {
  name: 'rse',
  initialState: initialRse,
  evolve: evolveRse,
  decide: decideRse,
};
