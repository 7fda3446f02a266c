import { rucioErrorClass } from '../shared/errors.ts';

/** The exceptions of replication rules, their creation and their locks. */
export const DuplicateRule = rucioErrorClass('DuplicateRule', 409);
export const InsufficientAccountLimit = rucioErrorClass('InsufficientAccountLimit', 409);
export const InsufficientTargetRSEs = rucioErrorClass('InsufficientTargetRSEs', 409);
export const InvalidReplicationRule = rucioErrorClass('InvalidReplicationRule', 409);
export const InvalidRuleWeight = rucioErrorClass('InvalidRuleWeight', 409);
export const InvalidSourceReplicaExpression = rucioErrorClass('InvalidSourceReplicaExpression');
export const ManualRuleApprovalBlocked = rucioErrorClass('ManualRuleApprovalBlocked', 409);
export const RSEOverQuota = rucioErrorClass('RSEOverQuota');
export const RSEWriteBlocked = rucioErrorClass('RSEWriteBlocked');
export const RuleNotFound = rucioErrorClass('RuleNotFound', 404);
export const RuleReplaceFailed = rucioErrorClass('RuleReplaceFailed', 409);
export const StagingAreaRuleRequiresLifetime = rucioErrorClass('StagingAreaRuleRequiresLifetime', 409);
