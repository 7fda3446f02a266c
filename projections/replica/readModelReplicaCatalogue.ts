import type { CatalogueRse, ReplicaCatalogue } from '../../domain/replica/replicaCatalogue.ts';
import { configSetting } from '../config/configQueries.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { replicaId, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';

const catalogueRse = (document: RseDocument, defaultAlgorithm: string): CatalogueRse => {
  const algorithm = document.attributes.lfn2pfn_algorithm;
  return {
    id: document.id,
    rse: document.rse,
    stagingArea: document.properties.staging_area,
    deterministic: document.properties.deterministic,
    lfn2pfnAlgorithm: typeof algorithm === 'string' && algorithm ? algorithm : defaultAlgorithm,
    protocols: document.protocols,
  };
};

/** The replica facts commands need, answered from the RSE, replica and configuration read models. */
export const readModelReplicaCatalogue = (readModels: ReadModels): ReplicaCatalogue => {
  const rses = () => readModels.collection<RseDocument>(rsesCollection);
  const replicas = () => readModels.collection<ReplicaDocument>(replicasCollection);
  const defaultAlgorithm = () => configSetting(readModels, SETTINGS.lfn2pfnDefault);
  return {
    async rses() {
      const fallback = await defaultAlgorithm();
      return (
        await rses()
          .find({ deleted: false }, { sort: { rse: 1 } })
          .toArray()
      ).map((document) => catalogueRse(document, fallback));
    },
    async rseById(rseId) {
      const document = await rses().findOne({ id: rseId, deleted: false });
      return document ? catalogueRse(document, await defaultAlgorithm()) : undefined;
    },
    async fileAtPath(rseId, path) {
      const replica = await replicas().findOne({ rse_id: rseId, path });
      return replica ? { scope: replica.scope, name: replica.name } : undefined;
    },
    async hasReplica(did, rseId) {
      return (await replicas().get(replicaId(did.scope, did.name, rseId))) !== null;
    },
    async catalogueBytes(rseId) {
      const document = await rses().findOne({ id: rseId });
      return document?.usage.rucio?.used ?? 0;
    },
  };
};
