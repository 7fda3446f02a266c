import type { ListingRse } from '../../domain/replica/replicaListing.ts';
import type { RseFacts } from '../../domain/rse/rseExpression.ts';
import { configSetting } from '../config/configQueries.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { rseFactsOf } from '../rse/rseFacts.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import { SETTINGS } from '../../domain/config/settings.ts';

/** An RSE as replica listings see it: PFN facts, readability, site, expression facts. */
export type ListedRse = Readonly<{
  listing: ListingRse;
  readable: boolean;
  /** The `site` attribute, which decides LAN or WAN for a client that names its site. */
  site: string | undefined;
  facts: RseFacts;
}>;

/** Config `policy.lfn2pfn_algorithm_default`, else `hash`. */
export const defaultAlgorithmOf = (readModels: ReadModels): Promise<string> =>
  configSetting(readModels, SETTINGS.lfn2pfnDefault);

export const listedRse = (document: RseDocument, defaultAlgorithm: string): ListedRse => {
  const algorithm = document.attributes.lfn2pfn_algorithm;
  const site = document.attributes.site;
  const signUrl = document.attributes.sign_url;
  return {
    listing: {
      id: document.id,
      rse: document.rse,
      rseType: document.properties.rse_type,
      volatile: document.properties.volatile,
      deterministic: document.properties.deterministic,
      lfn2pfnAlgorithm: typeof algorithm === 'string' && algorithm ? algorithm : defaultAlgorithm,
      protocols: document.protocols,
      latitude: document.properties.latitude,
      longitude: document.properties.longitude,
      ...(typeof signUrl === 'string' ? { signUrl } : {}),
    },
    readable: document.properties.availability_read,
    site: typeof site === 'string' ? site : undefined,
    facts: rseFactsOf(document),
  };
};

/**
 * Every RSE that is not deleted, by id, read once per request: a deployment has some hundreds of
 * RSEs, and every replica row of a listing needs its RSE's facts.
 */
export const loadListedRses = async (readModels: ReadModels): Promise<Map<string, ListedRse>> => {
  const defaultAlgorithm = await defaultAlgorithmOf(readModels);
  const documents = await readModels
    .collection<RseDocument>(rsesCollection)
    .find({ deleted: false }, { sort: { rse: 1 } })
    .toArray();
  return new Map(documents.map((document) => [document.id, listedRse(document, defaultAlgorithm)]));
};
