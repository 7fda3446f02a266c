import { SortingAlgorithmNotSupported } from '../shared/errors.ts';
import type { ListedFile, PfnEntry } from './replicaListing.ts';

/**
 * How the REST layer orders a file's PFNs for the client (web/rest/flaskapi/v1/replicas.py with
 * core/replica_sorter.py), then numbers them from 1 and keeps at most `limit`.
 */

export const SORTING_ALGORITHMS = ['geoip', 'custom_table', 'random'] as const;

/** An unknown algorithm is refused before anything is listed; none means `geoip`. */
export const checkSortingAlgorithm = (algorithm: string | undefined): void => {
  if (algorithm && !(SORTING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new SortingAlgorithmNotSupported(
      `Sorting algorithm: ${algorithm} is not supported. Supported protocols: [${SORTING_ALGORITHMS.map((name) => `'${name}'`).join(', ')}]`,
    );
  }
};

export type Coordinates = Readonly<{ latitude: number | null; longitude: number | null }>;

export type PfnOrder = Readonly<{
  algorithm: string | undefined;
  /** Where the client is: what it said (`client_location`), else where its address is, if known. */
  client: Coordinates;
  /** Where a PFN's storage is: its host's address located, else its RSE's own coordinates. */
  pfnCoordinates(pfn: string, entry: PfnEntry): Coordinates;
  /** `POST /replicas/list` puts LAN PFNs first by priority and sorts only the WAN ones. */
  lanFirst: boolean;
  limit: number | undefined;
  /** [0, 1), for `random`; given by the caller so this stays pure. */
  random(): number;
}>;

/** Distance used for an unknown location, as Rucio's geoip sorter does when it cannot locate a host. */
const UNKNOWN_DISTANCE = 360_000;
const EARTH_RADIUS_KM = 6378;

const radians = (degrees: number): number => (degrees * Math.PI) / 180;

/** Great-circle distance in km (haversine, Rucio's formula); unknown when a side has no coordinates. */
export const distanceKm = (a: Coordinates, b: Coordinates): number => {
  if (a.latitude === null || a.longitude === null || b.latitude === null || b.longitude === null)
    return UNKNOWN_DISTANCE;
  const [lat1, lon1, lat2, lon2] = [
    radians(a.latitude),
    radians(a.longitude),
    radians(b.latitude),
    radians(b.longitude),
  ];
  const h = Math.sin((lat2 - lat1) / 2) ** 2 + Math.cos(lat1) * Math.cos(lat2) * Math.sin((lon2 - lon1) / 2) ** 2;
  return EARTH_RADIUS_KM * 2 * Math.asin(Math.sqrt(h));
};

export type Pfn = [string, PfnEntry];

/**
 * The host a PFN's storage answers on, as Rucio's geoip sorter finds it: the URL's host, or for
 * a root proxy URL (`root://proxy//root://host:1094//path`) the host behind the proxy. Lower case,
 * without port or IPv6 brackets; undefined when the PFN names none.
 */
export const storageHostOf = (pfn: string): string | undefined => {
  const parse = (url: string) => /^([A-Za-z][A-Za-z\d+.-]*):\/\/([^/?#]*)([^?#]*)/.exec(url);
  let url = parse(pfn);
  if (url && url[1]!.toLowerCase() === 'root') {
    const inner = parse(url[3]!.replace(/^\/+/, ''));
    if (inner && hostOf(inner[2]!)) url = inner;
  }
  return url ? hostOf(url[2]!) : undefined;
};

const hostOf = (authority: string): string | undefined => {
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  const host = hostPort.startsWith('[') ? hostPort.slice(1, hostPort.indexOf(']')) : hostPort.split(':')[0]!;
  return host ? host.toLowerCase() : undefined;
};

/**
 * `geoip` orders by the distance between the client and each PFN's storage (see `PfnOrder`; a side
 * without coordinates counts as far away and keeps its place, so with no location known at all
 * the order stays, as in Rucio without a GeoIP database). `custom_table` needs a distance table
 * this service does not have, so it keeps the order. `random` shuffles. Sorts are stable.
 */
export const sortByAlgorithm = (pfns: Pfn[], order: PfnOrder): Pfn[] => {
  const algorithm = order.algorithm || 'geoip';
  if (algorithm === 'random') {
    const shuffled = [...pfns];
    for (let index = shuffled.length - 1; index > 0; index -= 1) {
      const other = Math.floor(order.random() * (index + 1));
      [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
    }
    return shuffled;
  }
  // Without a client location every distance is the same: the order stays.
  if (algorithm !== 'geoip' || order.client.latitude === null || order.client.longitude === null) return pfns;
  const distances = new Map(
    pfns.map(([pfn, entry]) => [pfn, distanceKm(order.client, order.pfnCoordinates(pfn, entry))]),
  );
  return [...pfns].sort(([a], [b]) => distances.get(a)! - distances.get(b)!);
};

const byPriority = (a: Pfn, b: Pfn): number => a[1].priority - b[1].priority;

/** The file's PFNs in the order the client gets them, numbered from 1, at most `limit`. */
export const orderedPfns = (file: ListedFile, order: PfnOrder): Record<string, PfnEntry> => {
  let ordered: Pfn[];
  const all = Object.entries(file.pfns);
  // One PFN is already first and numbered 1 (the usual case: one replica, one protocol).
  if (all.length === 1 && (order.limit === undefined || order.limit >= 1)) return file.pfns;
  if (order.lanFirst) {
    const lan = all.filter(([, entry]) => entry.domain === 'lan').sort(byPriority);
    const wan = all.filter(([, entry]) => entry.domain !== 'lan').sort(byPriority);
    ordered = [...lan, ...sortByAlgorithm(wan, order)];
  } else {
    ordered = sortByAlgorithm(
      Object.values(file.rses).flatMap((pfns) => pfns.map((pfn): Pfn => [pfn, file.pfns[pfn]!])),
      order,
    );
  }
  const result: Record<string, PfnEntry> = {};
  const count = order.limit === undefined ? ordered.length : Math.min(order.limit, ordered.length);
  for (let index = 0; index < count; index += 1) {
    const [pfn, entry] = ordered[index]!;
    result[pfn] = { ...entry, priority: index + 1 };
  }
  return result;
};
