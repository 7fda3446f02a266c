import type { DidGraph } from '../../domain/did/didGraph.ts';
import {
  ancestorKeys,
  catalogueFacts,
  datasetsBelow,
  filesBelow,
  findDid,
  parentsOf,
  parentsOfMany,
  sumDatasetTotals,
} from './didQueries.ts';
import type { ReadModels } from '../runtime/readModels.ts';

/** The DID graph facts commands need, answered from the content and DID read models. */
export const readModelDidGraph = (readModels: ReadModels): DidGraph => ({
  async parents(scope, name) {
    return (await parentsOf(readModels, scope, name)).map((edge) => ({
      scope: edge.parentScope,
      name: edge.parentName,
    }));
  },
  parentsOfMany: (dids) => parentsOfMany(readModels, dids),
  ancestors: (scope, name) => ancestorKeys(readModels, scope, name),
  async descendantDatasetTotals(scope, name) {
    return sumDatasetTotals(readModels, await datasetsBelow(readModels, scope, name));
  },
  catalogued: (dids) => catalogueFacts(readModels, dids),
  async *files(scope, name) {
    const did = await findDid(readModels, scope, name);
    if (!did) return;
    for await (const file of filesBelow(readModels, did)) yield { scope: file.scope, name: file.name };
  },
});
