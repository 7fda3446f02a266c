import { Reader, type CityResponse } from 'maxmind';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Logger } from './logger.ts';
import { fileVersionOf } from './fileVersion.ts';

/**
 * Where an IP address is, from a MaxMind database file (GeoLite2-City or GeoIP2-City, `.mmdb`)
 * the operator supplies (DMS_GEOIP_DB): what Rucio's `geoip` replica sorting asks its GeoIP
 * database. No address is ever looked up anywhere else, and host names are not resolved: only
 * IP addresses are located. The file is read again when it changes (MaxMind updates it weekly),
 * looked at no more than once a second.
 */
export type Location = Readonly<{ latitude: number; longitude: number }>;

export interface GeoLocator {
  /** The database file, or undefined when none is configured (then nothing is located). */
  readonly source: string | undefined;
  /** The location of an IP address, or null (no database, not an IP address, not in it, no coordinates). */
  locate(address: string): Location | null;
}

export class GeoLocatorInvalid extends Error {
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'GeoLocatorInvalid';
  }
}

const openReader = (path: string): Reader<CityResponse> => {
  try {
    return new Reader<CityResponse>(readFileSync(path));
  } catch (error) {
    throw new GeoLocatorInvalid(
      `DMS_GEOIP_DB=${path}`,
      `is not a MaxMind database (${error instanceof Error ? error.message : String(error)})`,
    );
  }
};

class MaxMindLocator implements GeoLocator {
  private reader: Reader<CityResponse>;
  private version: string;
  private checkedAt = 0;

  constructor(
    readonly source: string,
    private readonly logger: Logger,
  ) {
    this.reader = openReader(source);
    this.version = fileVersionOf(source);
  }

  locate(given: string): Location | null {
    // A server listening on IPv6 sees IPv4 clients as IPv4-mapped addresses (::ffff:a.b.c.d).
    const mapped = given.toLowerCase().startsWith('::ffff:') ? given.slice(7) : undefined;
    const address = mapped !== undefined && isIP(mapped) === 4 ? mapped : given;
    const version = isIP(address);
    if (version === 0) return null;
    this.refresh();
    // An IPv4 database has no answer for an IPv6 address (its tree would be walked past its depth).
    if (version === 6 && this.reader.metadata.ipVersion === 4) return null;
    try {
      const location = this.reader.get(address)?.location;
      if (location?.latitude === undefined || location.longitude === undefined) return null;
      return { latitude: location.latitude, longitude: location.longitude };
    } catch {
      return null;
    }
  }

  private refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < 1000) return;
    this.checkedAt = now;
    const version = fileVersionOf(this.source);
    if (version === this.version) return;
    this.version = version;
    try {
      this.reader = openReader(this.source);
      this.logger.info({ path: this.source }, 'read the GeoIP database again');
    } catch (error) {
      this.logger.error({ err: error }, 'the GeoIP database changed but cannot be read; keeping the one read before');
    }
  }
}

const NO_DATABASE: GeoLocator = { source: undefined, locate: () => null };

/**
 * The locator of DMS_GEOIP_DB. Without a database, `geoip` sorting orders replicas by what is
 * known without one (the client's `client_location` coordinates and the RSEs' own), and keeps
 * their order otherwise, as Rucio does when it has no database: this is said once, in the log.
 */
export const geoLocator = (path: string | undefined, logger: Logger): GeoLocator => {
  if (path === undefined) {
    logger.info(
      'no GeoIP database (DMS_GEOIP_DB): geoip replica sorting uses client_location coordinates and RSE coordinates only',
    );
    return NO_DATABASE;
  }
  return new MaxMindLocator(path, logger);
};
