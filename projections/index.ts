import { accountLimitsProjection } from './account/accountLimitsProjection.ts';
import { accountsProjection } from './account/accountsProjection.ts';
import { accountUsageProjection } from './account/accountUsageProjection.ts';
import { auditIndexProjection } from './audit/auditIndex.ts';
import { badReplicasProjection } from './replica/badReplicasProjection.ts';
import { configProjection } from './config/configProjection.ts';
import { didContentsProjection } from './did/didContentsProjection.ts';
import { didFollowersProjection } from './did/didFollowersProjection.ts';
import { didsProjection } from './did/didsProjection.ts';
import { identitiesProjection } from './identity/identitiesProjection.ts';
import { metaConventionsProjection } from './metaConvention/metaConventionsProjection.ts';
import type { AnyProjection } from './projection.ts';
import { quarantinedReplicasProjection } from './replica/quarantinedReplicasProjection.ts';
import { replicasProjection } from './replica/replicaProjection.ts';
import { requestsProjection } from './request/requestsProjection.ts';
import { transferLimitsProjection } from './request/transferLimitsProjection.ts';
import { transferStatsProjection } from './request/transferStatsProjection.ts';
import { rsesProjection } from './rse/rsesProjection.ts';
import { rulesProjection } from './rule/ruleProjection.ts';
import { scopesProjection } from './scope/scopesProjection.ts';
import { subscriptionsProjection } from './subscription/subscriptionsProjection.ts';
import { lifetimeExceptionsProjection } from './lifetimeException/lifetimeExceptionsProjection.ts';
import { opendataDidsProjection } from './opendata/opendataDidsProjection.ts';
import { archiveContentsProjection } from './did/archiveContentsProjection.ts';

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
