import type { RuleFacts } from '../../domain/rule/ruleFacts.ts';
import { didFromKey, didKey } from '../../domain/did/did.ts';
import type { ReplicaState } from '../../domain/replica/replica.ts';
import { accountUsageCollection, type AccountUsageDocument } from '../account/accountUsageProjection.ts';
import { datasetsBelow } from '../did/didQueries.ts';
import { BY_FILE, replicasCollection, type ReplicaDocument } from '../replica/replicaDocuments.ts';
import { loadRseFacts } from '../rse/rseFacts.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';

/** Files asked about per replica query. */
const PAGE = 500;

/** The rule facts commands need, answered from the RSE, usage, content and replica read models. */
export const readModelRuleFacts = (readModels: ReadModels): RuleFacts => ({
  rses: () => loadRseFacts(readModels),
  async accountUsage(account) {
    const usage: Record<string, number> = {};
    for await (const document of readModels
      .collection<AccountUsageDocument>(accountUsageCollection)
      .find({ account })) {
      usage[document.rseId] = document.bytes;
    }
    return usage;
  },
  async rseSpace() {
    const space: Record<string, { maxSpace: number | null; used: number }> = {};
    for await (const document of readModels.collection<RseDocument>(rsesCollection).find({ deleted: false })) {
      space[document.id] = {
        maxSpace: document.limits.MaxSpaceAvailable ?? null,
        used: document.usage.rucio?.used ?? 0,
      };
    }
    return space;
  },
  async replicasOf(files) {
    const replicas = new Map<string, Record<string, { state: ReplicaState }>>();
    for (let start = 0; start < files.length; start += PAGE) {
      const keys = files.slice(start, start + PAGE).map((file) => didKey(file.scope, file.name));
      const found = readModels
        .collection<ReplicaDocument>(replicasCollection)
        .find({ didKey: { $in: keys } }, { sort: BY_FILE });
      for await (const replica of found) {
        const entry = replicas.get(replica.didKey) ?? {};
        entry[replica.rse_id] = { state: replica.state };
        replicas.set(replica.didKey, entry);
      }
    }
    return replicas;
  },
  async datasetsBelow(container) {
    const keys = [...(await datasetsBelow(readModels, container.scope, container.name))].sort();
    return keys.map(didFromKey);
  },
});
