import { accountLimitsProjection } from './account/accountLimits.ts';
import { accountsProjection } from './account/accounts.ts';
import { accountUsageProjection } from './account/accountUsage.ts';
import { auditIndexProjection } from './audit/auditIndex.ts';
import { badReplicasProjection } from './replica/badReplicas.ts';
import { configProjection } from './config/config.ts';
import { didContentsProjection } from './did/didContents.ts';
import { didFollowersProjection } from './did/didFollowers.ts';
import { didsProjection } from './did/dids.ts';
import { identitiesProjection } from './identity/identities.ts';
import { metaConventionsProjection } from './metaConvention/metaConventions.ts';
import type { AnyProjection } from './projection.ts';
import { quarantinedReplicasProjection } from './replica/quarantinedReplicas.ts';
import { replicasProjection } from './replica/replicaProjection.ts';
import { requestsProjection } from './request/requests.ts';
import { transferLimitsProjection } from './request/transferLimits.ts';
import { transferStatsProjection } from './request/transferStats.ts';
import { rsesProjection } from './rse/rses.ts';
import { rulesProjection } from './rule/ruleProjection.ts';
import { scopesProjection } from './scope/scopes.ts';
import { subscriptionsProjection } from './subscription/subscriptions.ts';
import { lifetimeExceptionsProjection } from './lifetimeException/lifetimeExceptions.ts';
import { opendataDidsProjection } from './opendata/opendataDids.ts';
import { archiveContentsProjection } from './did/archiveContents.ts';

/**
 * Projections written together: one runner, on its own thread or process, with its own
 * subscription to `$all`, its projections' checkpoints and, on SQLite, its own database file
 * (`readmodels-<group>.sqlite`), so that the groups write their read models in parallel, each on a
 * core. A projection belongs to exactly one group; every document a projection writes is in its
 * own collections, so no transaction spans two groups. They are grouped by what they read and
 * write, the heaviest writers apart: a registration writes DIDs, contents, replicas and an audit
 * entry per file, each group its share. `dms projector --groups a,b` runs some of them.
 */
export type ProjectionGroup = Readonly<{ name: string; projections: readonly AnyProjection[] }>;

/** Every projection the service runs, by group; the runners and ReadModels are built from this list. */
export const projectionGroups: readonly ProjectionGroup[] = [
  // One document per event and an index entry per subject: the largest writer, fed by every event.
  { name: 'audit', projections: [auditIndexProjection] },
  {
    name: 'dids',
    projections: [didsProjection, didContentsProjection, didFollowersProjection, archiveContentsProjection],
  },
  { name: 'replicas', projections: [replicasProjection, badReplicasProjection, quarantinedReplicasProjection] },
  { name: 'rules', projections: [rulesProjection, accountUsageProjection] },
  { name: 'transfers', projections: [requestsProjection, transferLimitsProjection, transferStatsProjection] },
  // Small models written rarely (accounts, RSEs, settings), and the RSEs' usage counters, one per RSE.
  {
    name: 'general',
    projections: [
      accountsProjection,
      identitiesProjection,
      scopesProjection,
      configProjection,
      rsesProjection,
      accountLimitsProjection,
      metaConventionsProjection,
      subscriptionsProjection,
      lifetimeExceptionsProjection,
      opendataDidsProjection,
    ],
  },
];

/** Every projection the service runs, group after group. */
export const allProjections: readonly AnyProjection[] = projectionGroups.flatMap((group) => group.projections);
