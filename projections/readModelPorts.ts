import type { DidGraph } from '../domain/did/didGraph.ts';
import type { ReplicaCatalogue } from '../domain/replica/replicaCatalogue.ts';
import type { RuleFacts } from '../domain/rule/ruleFacts.ts';
import { readModelDidGraph } from './did/readModelDidGraph.ts';
import { readModelReplicaCatalogue } from './replica/readModelReplicaCatalogue.ts';
import { readModelRuleFacts } from './rule/readModelRuleFacts.ts';
import type { ReadModels } from './runtime/readModels.ts';

/** The command ports answered from the read models, for `createCommandContext`. */
export const readModelPorts = (
  readModels: ReadModels,
): Readonly<{ didGraph: DidGraph; replicaCatalogue: ReplicaCatalogue; ruleFacts: RuleFacts }> => ({
  didGraph: readModelDidGraph(readModels),
  replicaCatalogue: readModelReplicaCatalogue(readModels),
  ruleFacts: readModelRuleFacts(readModels),
});
