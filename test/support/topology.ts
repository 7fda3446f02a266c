import { DEFAULT_RSE_PROPERTIES, type RseProperties } from '../../domain/rse/rse.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';
import {
  DEFAULT_HOP_PENALTY,
  DEFAULT_MULTIHOP_TOMBSTONE_DELAY,
  Topology,
  type MultihopSettings,
  type TransferRse,
} from '../../domain/request/topology.ts';
import type { SelectionRequest } from '../../domain/request/sourceSelection.ts';

/** Builders for the conveyor's pure parts: RSEs with copy protocols, distances, requests. */

export const copyProtocol = (
  scheme: string,
  hostname: string,
  priority = 1,
  extra: Partial<RseProtocol> = {},
): RseProtocol => {
  const domains = noPriorities();
  domains.wan.third_party_copy_read = priority;
  domains.wan.third_party_copy_write = priority;
  domains.wan.read = priority;
  domains.wan.write = priority;
  return {
    scheme,
    hostname,
    port: 1094,
    prefix: '/data',
    impl: 'rucio.rse.protocols.xrootd.Default',
    domains,
    extended_attributes: null,
    ...extra,
  };
};

export const transferRse = (
  rse: string,
  options: {
    properties?: Partial<RseProperties>;
    attributes?: Record<string, string | boolean>;
    protocols?: RseProtocol[];
  } = {},
): TransferRse => ({
  id: `${rse.toLowerCase()}-id`,
  rse,
  properties: { ...DEFAULT_RSE_PROPERTIES, ...options.properties },
  attributes: { [rse]: true, ...options.attributes },
  protocols: options.protocols ?? [copyProtocol('root', `${rse.toLowerCase()}.example.org`)],
});

/** A topology over RSEs with `links` as `[source, destination, distance]` (names). */
export const aTopology = (
  rses: readonly TransferRse[],
  links: readonly (readonly [string, string, number | null])[],
  options: {
    transferAdmins?: string[];
    defaultTransfertool?: string;
    /** Multihop through `available_for_multihop` RSEs (Rucio's defaults) unless told otherwise. */
    multihop?: Partial<MultihopSettings>;
  } = {},
): Topology => {
  const byName = new Map(rses.map((rse) => [rse.rse, rse]));
  const distances = new Map<string, Map<string, number | null>>();
  for (const [source, dest, distance] of links) {
    const sourceId = byName.get(source)!.id;
    distances.set(sourceId, (distances.get(sourceId) ?? new Map()).set(byName.get(dest)!.id, distance));
  }
  return new Topology({
    rses,
    distances,
    transferAdmins: new Set(['root', ...(options.transferAdmins ?? [])]),
    lfn2pfnDefault: 'identity',
    defaultTransfertool: options.defaultTransfertool ?? 'mock',
    multihop: {
      rseExpression: 'available_for_multihop=true',
      hopPenalty: DEFAULT_HOP_PENALTY,
      maxHops: null,
      tombstoneDelay: DEFAULT_MULTIHOP_TOMBSTONE_DELAY,
      ...options.multihop,
    },
  });
};

export const aSelectionRequest = (dest: string, extra: Partial<SelectionRequest> = {}): SelectionRequest => ({
  id: 'r1',
  requestType: 'TRANSFER',
  scope: 'user.jdoe',
  name: 'f1',
  destRseId: `${dest.toLowerCase()}-id`,
  account: 'jdoe',
  sourceReplicaExpression: null,
  allowTapeSource: true,
  rankings: [],
  preferredSourceRseId: null,
  ...extra,
});

export const replicaOn = (rse: string, path: string | null = null) => ({ rseId: `${rse.toLowerCase()}-id`, path });
