import type { RseProtocol } from '../../domain/rse/protocol.ts';
import type { DidCreated, DidErased } from '../../domain/did/did.ts';
import {
  replicasAddedWith,
  replicasDeletedWith,
  type ReplicaAdded,
  type ReplicaDeleted,
} from '../../domain/replica/replica.ts';
import {
  RSE_EVENT_TYPES,
  type RseAttributeValue,
  type RseEvent,
  type RseProperties,
  type RseUsage,
} from '../../domain/rse/rse.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** One document per RSE name, deleted ones included (flagged) so their names stay known. */
export type RseDocument = Projected<{
  rse: string;
  id: string;
  deleted: boolean;
  properties: RseProperties;
  attributes: Record<string, RseAttributeValue>;
  protocols: RseProtocol[];
  limits: Record<string, number>;
  usage: Record<string, RseUsage>;
  qosPolicies: string[];
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}>;

/** One document per directed distance, keyed `<source id>|<destination id>`. */
export type RseDistanceDocument = Projected<{
  srcRseId: string;
  srcRse: string;
  destRseId: string;
  destRse: string;
  distance: number | null;
  createdAt: string;
  updatedAt: string;
}>;

/** Every usage value ever set, newest last; `GET /rses/{rse}/usage/history` reads it. */
export type RseUsageHistoryDocument = Projected<{
  rseId: string;
  rse: string;
  source: string;
  used: number | null;
  free: number | null;
  files: number | null;
  updatedAt: string;
}>;

export const rsesCollection: CollectionSpec = {
  name: 'rses',
  indexes: [{ fields: ['deleted', 'rse'] }, { fields: ['id'] }],
};
export const rseDistancesCollection: CollectionSpec = {
  name: 'rse_distances',
  // A pair's distance is read by its id; only "the distances to an RSE" is a query.
  indexes: [{ fields: ['destRseId'] }],
};
export const rseUsageHistoryCollection: CollectionSpec = {
  name: 'rse_usage_history',
  indexes: [{ fields: ['rseId', 'updatedAt'] }],
};

export const distanceDocumentId = (srcRseId: string, destRseId: string): string => `${srcRseId}|${destRseId}`;

/**
 * The `rucio` usage source is the catalogue's own counter: every replica added on the RSE adds
 * its bytes and one file (Rucio's abacus-rse does this later from its counter table; here the
 * replica events drive it). Setting the source explicitly replaces the counter, as in Rucio.
 */
const countedReplica = (
  usage: Record<string, RseUsage>,
  event: ReplicaAdded | ReplicaDeleted,
): Record<string, RseUsage> => {
  const counter = usage.rucio;
  const sign = event.type === 'ReplicaAdded' ? 1 : -1;
  const at = event.type === 'ReplicaAdded' ? event.data.addedAt : event.data.deletedAt;
  return {
    ...usage,
    rucio: {
      used: (counter?.used ?? 0) + sign * event.data.bytes,
      free: counter?.free ?? null,
      files: (counter?.files ?? 0) + sign,
      updatedAt: at,
    },
  };
};

/** How each event changes the RSE's own document (undefined: the event does not touch it). */
const evolveRseDocument = (
  document: RseDocument | null,
  event: RseEvent | ReplicaAdded | ReplicaDeleted,
): RseDocument | null | undefined => {
  if (event.type === 'RseCreated') {
    return {
      _id: event.data.rse,
      rse: event.data.rse,
      id: event.data.rseId,
      deleted: false,
      properties: event.data.properties,
      attributes: {},
      protocols: [],
      limits: {},
      usage: {},
      qosPolicies: [],
      createdAt: event.data.createdAt,
      updatedAt: event.data.createdAt,
      deletedAt: null,
    };
  }
  if (!document) return undefined;
  switch (event.type) {
    case 'RseUpdated':
      return {
        ...document,
        properties: { ...document.properties, ...event.data.changes },
        updatedAt: event.data.updatedAt,
      };
    case 'RseDeleted':
      return { ...document, deleted: true, deletedAt: event.data.deletedAt, updatedAt: event.data.deletedAt };
    case 'RseAttributeSet':
      return { ...document, attributes: { ...document.attributes, [event.data.key]: event.data.value } };
    case 'RseAttributeRemoved': {
      const { [event.data.key]: _removed, ...attributes } = document.attributes;
      return { ...document, attributes };
    }
    case 'RseProtocolAdded':
      return { ...document, protocols: [...document.protocols, event.data.protocol] };
    case 'RseProtocolUpdated': {
      const { scheme, hostname, port } = event.data.protocol;
      const protocols = document.protocols.map((protocol) =>
        protocol.scheme === scheme && protocol.hostname === hostname && protocol.port === port
          ? event.data.protocol
          : protocol,
      );
      return { ...document, protocols };
    }
    case 'RseProtocolRemoved': {
      const { scheme, hostname, port } = event.data;
      const protocols = document.protocols.filter(
        (protocol) => !(protocol.scheme === scheme && protocol.hostname === hostname && protocol.port === port),
      );
      return { ...document, protocols };
    }
    case 'RseUsageSet': {
      const { used, free, files, updatedAt } = event.data;
      return { ...document, usage: { ...document.usage, [event.data.source]: { used, free, files, updatedAt } } };
    }
    case 'RseLimitSet':
      return { ...document, limits: { ...document.limits, [event.data.name]: event.data.value } };
    case 'RseLimitRemoved': {
      const { [event.data.name]: _removed, ...limits } = document.limits;
      return { ...document, limits };
    }
    case 'RseQosPolicyAdded':
      return { ...document, qosPolicies: [...document.qosPolicies, event.data.policy] };
    case 'RseQosPolicyRemoved':
      return { ...document, qosPolicies: document.qosPolicies.filter((policy) => policy !== event.data.policy) };
    case 'ReplicaAdded':
    case 'ReplicaDeleted':
      // The reaper's deletions give the counter back (Rucio's `delete_replicas` decreases it).
      return { ...document, usage: countedReplica(document.usage, event) };
    default:
      return undefined;
  }
};

export const rsesProjection: Projection<RseEvent | ReplicaAdded | ReplicaDeleted | DidCreated | DidErased> = {
  name: 'rses',
  version: 2,
  collections: [rsesCollection, rseDistancesCollection, rseUsageHistoryCollection],
  // A file registered with replicas carries them in its DidCreated, one the reaper erased its
  // last replicas' deletions in its DidErased.
  handles: { ...RSE_EVENT_TYPES, ReplicaAdded: true, ReplicaDeleted: true, DidCreated: true, DidErased: true },
  async apply(event, context) {
    if (event.type === 'DidCreated' || event.type === 'DidErased') {
      for (const added of event.type === 'DidCreated' ? replicasAddedWith(event) : replicasDeletedWith(event))
        await context
          .collection<RseDocument>(rsesCollection)
          .update(added.data.rse, (document) => evolveRseDocument(document, added));
      return;
    }
    await context
      .collection<RseDocument>(rsesCollection)
      .update(event.data.rse, (document) => evolveRseDocument(document, event));
    switch (event.type) {
      case 'RseDistanceSet': {
        const id = distanceDocumentId(event.data.rseId, event.data.destRseId);
        await context.collection<RseDistanceDocument>(rseDistancesCollection).update(id, (document) => ({
          _id: id,
          srcRseId: event.data.rseId,
          srcRse: event.data.rse,
          destRseId: event.data.destRseId,
          destRse: event.data.destRse,
          distance: event.data.distance,
          createdAt: document?.createdAt ?? event.data.at,
          updatedAt: event.data.at,
        }));
        return;
      }
      case 'RseDistanceRemoved':
        await context
          .collection<RseDistanceDocument>(rseDistancesCollection)
          .update(distanceDocumentId(event.data.rseId, event.data.destRseId), () => null);
        return;
      case 'RseUsageSet': {
        // The event's position makes the id, so a replayed event finds its own entry; padded so
        // ids sort in the order the values were set.
        const id = `${event.data.rseId}|${event.data.source}|${String(context.position).padStart(20, '0')}`;
        const { rseId, rse, source, used, free, files, updatedAt } = event.data;
        await context
          .collection<RseUsageHistoryDocument>(rseUsageHistoryCollection)
          .update(id, () => ({ _id: id, rseId, rse, source, used, free, files, updatedAt }));
        return;
      }
      default:
        return;
    }
  },
};
