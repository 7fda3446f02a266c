import type { RseFacts } from '../../domain/rse/rseExpression.ts';
import { rsesCollection, type RseDocument } from './rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';

export const rseFactsOf = (document: RseDocument): RseFacts => ({
  id: document.id,
  rse: document.rse,
  properties: document.properties,
  attributes: document.attributes,
});

/**
 * Every RSE that is not deleted, by name: what RSE expressions are evaluated over. A deployment
 * has at most some hundreds of RSEs, so they are read whole.
 */
export const loadRseFacts = async (readModels: ReadModels): Promise<RseFacts[]> => {
  const documents = await readModels
    .collection<RseDocument>(rsesCollection)
    .find({ deleted: false }, { sort: { rse: 1 } })
    .toArray();
  return documents.map(rseFactsOf);
};
