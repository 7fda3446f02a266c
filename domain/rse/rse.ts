import { eventTypes, type Event } from '../shared/event.ts';
import { sameProtocolKey, type RseProtocol } from './protocol.ts';

/**
 * A storage element (RSE). Its stream holds the record, its attributes, protocols, limits, usage
 * per source, QoS policies and the distances that start at it. Deleted RSEs keep their stream, so
 * their name can never be taken again.
 */
export const rseStreamName = (rse: string): string => `rse-${rse}`;

export const RSE_TYPES = ['DISK', 'TAPE'] as const;
export type RseType = (typeof RSE_TYPES)[number];

/** Attribute values are text or booleans, as Rucio's BooleanString column keeps them. */
export type RseAttributeValue = string | boolean;

/** The RSE record, under Rucio's column names (they are also what expressions compare). */
export type RseProperties = {
  rse_type: RseType;
  deterministic: boolean;
  volatile: boolean;
  staging_area: boolean;
  city: string | null;
  region_code: string | null;
  country_name: string | null;
  continent: string | null;
  time_zone: string | null;
  ISP: string | null;
  ASN: string | null;
  latitude: number | null;
  longitude: number | null;
  availability_read: boolean;
  availability_write: boolean;
  availability_delete: boolean;
  qos_class: string | null;
};

/** The properties held as text (Rucio's String columns), null when unset. */
export const RSE_TEXT_PROPERTIES = [
  'city',
  'region_code',
  'country_name',
  'continent',
  'time_zone',
  'ISP',
  'ASN',
  'qos_class',
] as const satisfies readonly (keyof RseProperties)[];

/** The properties held as numbers (Rucio's Float columns), null when unset. */
export const RSE_NUMBER_PROPERTIES = ['latitude', 'longitude'] as const satisfies readonly (keyof RseProperties)[];

/** The properties held as booleans. */
export const RSE_BOOLEAN_PROPERTIES = [
  'deterministic',
  'volatile',
  'staging_area',
  'availability_read',
  'availability_write',
  'availability_delete',
] as const satisfies readonly (keyof RseProperties)[];

export const DEFAULT_RSE_PROPERTIES: Readonly<RseProperties> = {
  rse_type: 'DISK',
  deterministic: true,
  volatile: false,
  staging_area: false,
  city: null,
  region_code: null,
  country_name: null,
  continent: null,
  time_zone: null,
  ISP: null,
  ASN: null,
  latitude: null,
  longitude: null,
  availability_read: true,
  availability_write: true,
  availability_delete: true,
  qos_class: null,
};

/** Rucio copies these settings into attributes of the same name (core/rse.py RSE_SETTINGS). */
export const RSE_SETTING_ATTRIBUTES = [
  'continent',
  'city',
  'region_code',
  'country_name',
  'time_zone',
  'ISP',
  'ASN',
] as const;

/** The properties `PUT /rses/{rse}` may change (core/rse.py MUTABLE_RSE_PROPERTIES, without renames). */
export const MUTABLE_RSE_PROPERTIES = [
  'availability_read',
  'availability_write',
  'availability_delete',
  'latitude',
  'longitude',
  'time_zone',
  'rse_type',
  'volatile',
  'deterministic',
  'region_code',
  'country_name',
  'city',
  'staging_area',
  'qos_class',
  'continent',
] as const satisfies readonly (keyof RseProperties)[];

export type RseUsage = { used: number | null; free: number | null; files: number | null; updatedAt: string };
export type RseDistance = { destRse: string; distance: number | null; createdAt: string; updatedAt: string };

type RseRef = { rseId: string; rse: string };

export type RseCreated = Event<'RseCreated', RseRef & { properties: RseProperties; createdAt: string }>;
export type RseUpdated = Event<'RseUpdated', RseRef & { changes: Partial<RseProperties>; updatedAt: string }>;
export type RseDeleted = Event<'RseDeleted', RseRef & { deletedAt: string }>;
export type RseAttributeSet = Event<'RseAttributeSet', RseRef & { key: string; value: RseAttributeValue }>;
export type RseAttributeRemoved = Event<'RseAttributeRemoved', RseRef & { key: string }>;
export type RseProtocolAdded = Event<'RseProtocolAdded', RseRef & { protocol: RseProtocol }>;
/** Carries the whole protocol after the change, so readers need not merge partial updates. */
export type RseProtocolUpdated = Event<'RseProtocolUpdated', RseRef & { protocol: RseProtocol }>;
export type RseProtocolRemoved = Event<
  'RseProtocolRemoved',
  RseRef & { scheme: string; hostname: string; port: number }
>;
export type RseUsageSet = Event<
  'RseUsageSet',
  RseRef & { source: string; used: number | null; free: number | null; files: number | null; updatedAt: string }
>;
export type RseLimitSet = Event<'RseLimitSet', RseRef & { name: string; value: number }>;
export type RseLimitRemoved = Event<'RseLimitRemoved', RseRef & { name: string }>;
export type RseQosPolicyAdded = Event<'RseQosPolicyAdded', RseRef & { policy: string }>;
export type RseQosPolicyRemoved = Event<'RseQosPolicyRemoved', RseRef & { policy: string }>;
/** Distances are directed; they live in the stream of their source RSE. */
export type RseDistanceSet = Event<
  'RseDistanceSet',
  RseRef & { destRseId: string; destRse: string; distance: number | null; at: string }
>;
export type RseDistanceRemoved = Event<'RseDistanceRemoved', RseRef & { destRseId: string; destRse: string }>;

export type RseEvent =
  | RseCreated
  | RseUpdated
  | RseDeleted
  | RseAttributeSet
  | RseAttributeRemoved
  | RseProtocolAdded
  | RseProtocolUpdated
  | RseProtocolRemoved
  | RseUsageSet
  | RseLimitSet
  | RseLimitRemoved
  | RseQosPolicyAdded
  | RseQosPolicyRemoved
  | RseDistanceSet
  | RseDistanceRemoved;

/** Every RSE event type, each once: a type added to the union and missing here does not compile. */
export const RSE_EVENT_TYPES = eventTypes<RseEvent>({
  RseCreated: true,
  RseUpdated: true,
  RseDeleted: true,
  RseAttributeSet: true,
  RseAttributeRemoved: true,
  RseProtocolAdded: true,
  RseProtocolUpdated: true,
  RseProtocolRemoved: true,
  RseUsageSet: true,
  RseLimitSet: true,
  RseLimitRemoved: true,
  RseQosPolicyAdded: true,
  RseQosPolicyRemoved: true,
  RseDistanceSet: true,
  RseDistanceRemoved: true,
});

export type RseRecord = {
  id: string;
  rse: string;
  properties: RseProperties;
  attributes: Readonly<Record<string, RseAttributeValue>>;
  protocols: readonly RseProtocol[];
  limits: Readonly<Record<string, number>>;
  usage: Readonly<Record<string, RseUsage>>;
  qosPolicies: readonly string[];
  /** Keyed by the destination RSE's id. */
  distances: Readonly<Record<string, RseDistance>>;
};

export type Rse = { status: 'Absent' } | ({ status: 'Active' } & RseRecord) | ({ status: 'Deleted' } & RseRecord);

export const initialRse = (): Rse => ({ status: 'Absent' });

/** A new RSE as it is created: its properties, and nothing yet of the rest. */
export const newRseRecord = (id: string, rse: string, properties: RseProperties): RseRecord => ({
  id,
  rse,
  properties,
  attributes: {},
  protocols: [],
  limits: {},
  usage: {},
  qosPolicies: [],
  distances: {},
});

/** Rebuilds an RSE from its events; unknown events leave it unchanged. */
export const evolveRse = (state: Rse, event: RseEvent): Rse => {
  if (event.type === 'RseCreated') {
    return { status: 'Active', ...newRseRecord(event.data.rseId, event.data.rse, event.data.properties) };
  }
  if (state.status === 'Absent') return state;
  switch (event.type) {
    case 'RseUpdated':
      return { ...state, properties: { ...state.properties, ...event.data.changes } };
    case 'RseDeleted':
      return { ...state, status: 'Deleted' };
    case 'RseAttributeSet':
      return { ...state, attributes: { ...state.attributes, [event.data.key]: event.data.value } };
    case 'RseAttributeRemoved':
      return { ...state, attributes: without(state.attributes, event.data.key) };
    case 'RseProtocolAdded':
      return { ...state, protocols: [...state.protocols, event.data.protocol] };
    case 'RseProtocolUpdated':
      return {
        ...state,
        protocols: state.protocols.map((protocol) =>
          sameProtocolKey(protocol, event.data.protocol) ? event.data.protocol : protocol,
        ),
      };
    case 'RseProtocolRemoved':
      return { ...state, protocols: state.protocols.filter((protocol) => !sameProtocolKey(protocol, event.data)) };
    case 'RseUsageSet': {
      const { used, free, files, updatedAt } = event.data;
      return { ...state, usage: { ...state.usage, [event.data.source]: { used, free, files, updatedAt } } };
    }
    case 'RseLimitSet':
      return { ...state, limits: { ...state.limits, [event.data.name]: event.data.value } };
    case 'RseLimitRemoved':
      return { ...state, limits: without(state.limits, event.data.name) };
    case 'RseQosPolicyAdded':
      return { ...state, qosPolicies: [...state.qosPolicies, event.data.policy] };
    case 'RseQosPolicyRemoved':
      return { ...state, qosPolicies: state.qosPolicies.filter((policy) => policy !== event.data.policy) };
    case 'RseDistanceSet': {
      const existing = state.distances[event.data.destRseId];
      const distance: RseDistance = {
        destRse: event.data.destRse,
        distance: event.data.distance,
        createdAt: existing?.createdAt ?? event.data.at,
        updatedAt: event.data.at,
      };
      return { ...state, distances: { ...state.distances, [event.data.destRseId]: distance } };
    }
    case 'RseDistanceRemoved':
      return { ...state, distances: without(state.distances, event.data.destRseId) };
    default:
      return state;
  }
};

const without = <T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const { [key]: _removed, ...rest } = record;
  return rest;
};
