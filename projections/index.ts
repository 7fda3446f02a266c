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
