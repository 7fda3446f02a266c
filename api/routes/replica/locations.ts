import type { PfnEntry } from '../../../domain/replica/replicaListing.ts';
import { storageHostOf, type Coordinates } from '../../../domain/replica/replicaSorting.ts';
import type { ListedRse } from '../../../projections/replica/listingRses.ts';
import type { Services } from '../../services.ts';

/**
 * Where the client and the storage are, for `geoip` sorting. Rucio asks its GeoIP database for
 * both: the client's address, and each PFN's host after resolving its name. Here the database
 * (DMS_GEOIP_DB) locates addresses only, never resolving names: a PFN whose host is an IP address
 * is located by it, any other by its RSE's own `latitude` and `longitude`.
 */

const UNKNOWN: Coordinates = { latitude: null, longitude: null };

const coordinate = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** The client's coordinates as it gave them (`client_location`), else where its address is. */
export const clientCoordinates = (
  services: Services,
  given: Readonly<Record<string, unknown>>,
  address: string | undefined,
): Coordinates => {
  const latitude = coordinate(given.latitude);
  const longitude = coordinate(given.longitude);
  if (latitude !== null && longitude !== null) return { latitude, longitude };
  return (address === undefined ? null : services.geoLocator.locate(address)) ?? UNKNOWN;
};

/** Where each PFN's storage is (see above). */
export const pfnCoordinates =
  (services: Services, rses: ReadonlyMap<string, ListedRse>) =>
  (pfn: string, entry: PfnEntry): Coordinates => {
    const host = storageHostOf(pfn);
    const located = host === undefined ? null : services.geoLocator.locate(host);
    if (located) return located;
    const rse = rses.get(entry.rse_id)?.listing;
    return rse ? { latitude: rse.latitude, longitude: rse.longitude } : UNKNOWN;
  };
