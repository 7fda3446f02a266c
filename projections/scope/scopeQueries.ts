import type { Filter } from '../../infra/readstore/readStore.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { scopesCollection, type ScopeDocument } from './scopesProjection.ts';

/**
 * Scope names, by name. Rucio answers them as one JSON list, not a stream; scope names are short
 * and a deployment has some thousands at most, so the names are gathered whole.
 */

const namesOf = async (readModels: ReadModels, filter: Filter): Promise<string[]> => {
  const names: string[] = [];
  for await (const scope of readModels.collection<ScopeDocument>(scopesCollection).find(filter, { sort: { _id: 1 } }))
    names.push(scope.scope);
  return names;
};

export const scopeNames = (readModels: ReadModels): Promise<string[]> => namesOf(readModels, {});

export const scopeNamesOfAccount = (readModels: ReadModels, account: string): Promise<string[]> =>
  namesOf(readModels, { account });
