import { accountLimitsProjection } from './accountLimits.ts';
import { accountsProjection } from './accounts.ts';
import { accountUsageProjection } from './accountUsage.ts';
import { badReplicasProjection } from './badReplicas.ts';
import { configProjection } from './config.ts';
import { didContentsProjection } from './didContents.ts';
import { didFollowersProjection } from './didFollowers.ts';
import { didsProjection } from './dids.ts';
import { identitiesProjection } from './identities.ts';
import { metaConventionsProjection } from './metaConventions.ts';
import type { Projection } from './projection.ts';
import { quarantinedReplicasProjection } from './quarantinedReplicas.ts';
import { replicasProjection } from './replicaProjection.ts';
import { rsesProjection } from './rses.ts';
import { scopesProjection } from './scopes.ts';

/** Every projection the service runs; the runner and ReadModels are built from this list. */
export const allProjections: readonly Projection[] = [
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
];
