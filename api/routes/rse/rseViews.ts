import { availabilityInteger } from '../../../domain/rse/availability.ts';
import { PROTOCOL_DOMAINS, compareProtocols, type RseProtocol } from '../../../domain/rse/protocol.ts';
import { formatRucioDate, rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { RSENotFound } from '../../../domain/shared/errors.ts';
import { configSetting } from '../../../projections/config/configQueries.ts';
import { findRse } from '../../../projections/rse/rseQueries.ts';
import type { RseDistanceDocument, RseDocument } from '../../../projections/rse/rsesProjection.ts';
import type { Services } from '../../services.ts';
import { SETTINGS } from '../../../domain/config/settings.ts';

/** The answers' shapes for RSEs, as Rucio renders its rows and settings dictionaries. */

/** An RSE that exists and is not deleted, or RSENotFound with Rucio's message. */
export const activeRse = async (services: Services, rse: string): Promise<RseDocument> => {
  const document = await findRse(services.readModels, rse);
  if (!document || document.deleted) throw new RSENotFound(`RSE '${rse}' cannot be found in vo 'def'`);
  return document;
};

/** Config `policy.lfn2pfn_algorithm_default`, else `hash` (rucio.common.config). */
export const defaultLfn2pfnAlgorithm = (services: Services): Promise<string> =>
  configSetting(services.readModels, SETTINGS.lfn2pfnDefault);

export const lfn2pfnAlgorithmOf = (document: RseDocument, fallback: string): string => {
  const attribute = document.attributes.lfn2pfn_algorithm;
  return typeof attribute === 'string' && attribute ? attribute : fallback;
};

/** A line of `GET /rses/`: the RSE row (`RSE.to_dict()`), with the availability bitmask. */
export const rseListEntry = (document: RseDocument) => ({
  id: document.id,
  rse: document.rse,
  vo: 'def',
  ...document.properties,
  availability: availabilityInteger(document.properties),
  deleted: document.deleted,
  deleted_at: rucioDateOrNull(document.deletedAt),
  created_at: formatRucioDate(new Date(document.createdAt)),
  updated_at: formatRucioDate(new Date(document.updatedAt)),
});

export const protocolView = (protocol: RseProtocol) => ({
  hostname: protocol.hostname,
  scheme: protocol.scheme,
  port: protocol.port,
  prefix: protocol.prefix ?? '',
  impl: protocol.impl,
  domains: protocol.domains,
  extended_attributes: protocol.extended_attributes,
});

export const sortedProtocols = (document: RseDocument) =>
  [...document.protocols].sort(compareProtocols).map(protocolView);

/** Rucio's RSE settings (`get_rse_protocols`): what clients build PFNs from. */
export const rseSettings = (document: RseDocument, defaultAlgorithm: string) => {
  const verifyChecksum = document.attributes.verify_checksum;
  const signUrl = document.attributes.sign_url;
  return {
    availability_delete: document.properties.availability_delete,
    availability_read: document.properties.availability_read,
    availability_write: document.properties.availability_write,
    credentials: null,
    deterministic: document.properties.deterministic,
    domain: [...PROTOCOL_DOMAINS],
    id: document.id,
    lfn2pfn_algorithm: lfn2pfnAlgorithmOf(document, defaultAlgorithm),
    protocols: sortedProtocols(document),
    qos_class: document.properties.qos_class,
    rse: document.rse,
    rse_type: document.properties.rse_type,
    sign_url: signUrl === undefined ? null : signUrl,
    staging_area: document.properties.staging_area,
    verify_checksum: verifyChecksum === undefined ? true : verifyChecksum,
    volatile: document.properties.volatile,
  };
};

/**
 * `GET /rses/{rse}`: Rucio answers its settings plus the availability bitmask; the seeds' RSE
 * detail also names the geographic fields, so they are added.
 */
export const rseDetail = (document: RseDocument, defaultAlgorithm: string) => {
  const { city, region_code, country_name, continent, time_zone, ISP, ASN, latitude, longitude } = document.properties;
  return {
    ...rseSettings(document, defaultAlgorithm),
    availability: availabilityInteger(document.properties),
    city,
    region_code,
    country_name,
    continent,
    time_zone,
    ISP,
    ASN,
    latitude,
    longitude,
  };
};

/** A distance row, with the deprecated `ranking` and the RSE names Rucio's gateway adds. */
export const distanceView = (document: RseDistanceDocument) => ({
  src_rse_id: document.srcRseId,
  dest_rse_id: document.destRseId,
  distance: document.distance,
  ranking: document.distance,
  created_at: formatRucioDate(new Date(document.createdAt)),
  updated_at: formatRucioDate(new Date(document.updatedAt)),
  src_rse: document.srcRse,
  dest_rse: document.destRse,
});

/** Attributes as `jsonify` writes them: keys sorted. */
export const sortedAttributes = (document: RseDocument) =>
  Object.fromEntries(Object.entries(document.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
