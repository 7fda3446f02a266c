/**
 * The HTTP status of each exception class on almost every Rucio route
 * (rest-api-reference.md §3.2). Routes that differ declare their own statuses (api/route.ts);
 * a class missing here is an unexpected error and answers 500, as Rucio does.
 */
const STATUS_BY_CLASS: Readonly<Record<string, number>> = {
  ...statuses(400, [
    'ConfigurationError',
    'DIDFilterSyntaxError',
    'DuplicateCriteriaInDIDFilter',
    'IdentityError',
    'InputValidationError',
    'InvalidAccountType',
    'InvalidMetadata',
    'InvalidObject',
    'InvalidPath',
    'InvalidRSEExpression',
    'InvalidType',
    'InvalidValueForKey',
    'KeyError',
    'MissingParameter',
    'TypeError',
    'UnsupportedKeyType',
    'UnsupportedMetadataPlugin',
    'UnsupportedValueType',
    'ValueError',
  ]),
  ...statuses(401, ['AccessDenied', 'CannotAuthenticate', 'CannotAuthorize', 'IdentityNotFound']),
  ...statuses(404, [
    'AccountNotFound',
    'ConfigNotFound',
    'CounterNotFound',
    'DataIdentifierNotFound',
    'KeyNotFound',
    'LifetimeExceptionNotFound',
    'NotFound',
    'ReplicaNotFound',
    'RequestNotFound',
    'RSEAttributeNotFound',
    'RSENotFound',
    'RSEOperationNotSupported',
    'RSEProtocolDomainNotSupported',
    'RSEProtocolNotSupported',
    'RuleNotFound',
    'ScopeNotFound',
    'SortingAlgorithmNotSupported',
    'SubscriptionNotFound',
    'VONotFound',
  ]),
  ...statuses(405, ['MethodNotAllowed']),
  ...statuses(406, ['UnsupportedRequestedContentType']),
  ...statuses(409, [
    'DataIdentifierAlreadyExists',
    'Duplicate',
    'DuplicateContent',
    'DuplicateRule',
    'FileAlreadyExists',
    'InsufficientAccountLimit',
    'InsufficientTargetRSEs',
    'InvalidReplicationRule',
    'InvalidRuleWeight',
    'LifetimeExceptionDuplicate',
    'ManualRuleApprovalBlocked',
    'OpenDataDataIdentifierAlreadyExists',
    'ReplicationRuleCreationTemporaryFailed',
    'RSEProtocolPriorityError',
    'RuleReplaceFailed',
    'ScratchDiskLifetimeConflict',
    'StagingAreaRuleRequiresLifetime',
    'SubscriptionDuplicate',
    'UnsupportedOperation',
    'UnsupportedStatus',
  ]),
  ...statuses(412, ['FileConsistencyMismatch']),
  ...statuses(413, ['RequestEntityTooLarge']),
  ...statuses(423, ['ReplicaIsLocked']),
  ...statuses(503, ['ResourceTemporaryUnavailable']),
};

function statuses(status: number, classes: string[]): Record<string, number> {
  return Object.fromEntries(classes.map((exceptionClass) => [exceptionClass, status]));
}

export const statusOf = (exceptionClass: string, overrides?: Readonly<Record<string, number>>): number =>
  overrides?.[exceptionClass] ?? STATUS_BY_CLASS[exceptionClass] ?? 500;
