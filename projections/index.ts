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

/** Every projection the service runs; the runner and ReadModels are built from this list. */
export const allProjections: readonly AnyProjection[] = [
  accountsProjection,
  identitiesProjection,
  scopesProjection,
  configProjection,
  rsesProjection,
  accountLimitsProjection,
  accountUsageProjection,
  didsProjection,
  didContentsProjection,
  didFollowersProjection,
  metaConventionsProjection,
  replicasProjection,
  badReplicasProjection,
  quarantinedReplicasProjection,
  rulesProjection,
  requestsProjection,
  transferLimitsProjection,
  transferStatsProjection,
  subscriptionsProjection,
  lifetimeExceptionsProjection,
  auditIndexProjection,
  opendataDidsProjection,
  archiveContentsProjection,
];
