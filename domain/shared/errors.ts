/**
 * Domain errors name the exception class Rucio would raise (`DataIdentifierNotFound`,
 * `Duplicate`, ...). The API maps the class to an HTTP status (api/errorStatus.ts); the message is
 * what the client sees in `ExceptionMessage`.
 */
export class RucioError extends Error {
  constructor(
    readonly exceptionClass: string,
    message: string,
  ) {
    super(message);
    this.name = exceptionClass;
  }
}

export type RucioErrorClass = {
  new (message?: string): RucioError;
  readonly exceptionClass: string;
};

/** Declares one error class per Rucio exception name; `instanceof` works on the result. */
const rucioErrorClass = (exceptionClass: string): RucioErrorClass => {
  const errorClass = class extends RucioError {
    static readonly exceptionClass = exceptionClass;
    constructor(message?: string) {
      // Rucio answers the literal "None" when an exception carries no message.
      super(exceptionClass, message ?? 'None');
    }
  };
  Object.defineProperty(errorClass, 'name', { value: exceptionClass });
  return errorClass;
};

export const AccessDenied = rucioErrorClass('AccessDenied');
export const AccountNotFound = rucioErrorClass('AccountNotFound');
export const CannotAuthenticate = rucioErrorClass('CannotAuthenticate');
export const ConfigNotFound = rucioErrorClass('ConfigNotFound');
export const ConfigurationError = rucioErrorClass('ConfigurationError');
export const CounterNotFound = rucioErrorClass('CounterNotFound');
export const DatabaseException = rucioErrorClass('DatabaseException');
export const DataIdentifierAlreadyExists = rucioErrorClass('DataIdentifierAlreadyExists');
export const DataIdentifierNotFound = rucioErrorClass('DataIdentifierNotFound');
export const DIDFilterSyntaxError = rucioErrorClass('DIDFilterSyntaxError');
export const Duplicate = rucioErrorClass('Duplicate');
export const DuplicateContent = rucioErrorClass('DuplicateContent');
export const FileAlreadyExists = rucioErrorClass('FileAlreadyExists');
export const FileConsistencyMismatch = rucioErrorClass('FileConsistencyMismatch');
export const IdentityError = rucioErrorClass('IdentityError');
export const IdentityNotFound = rucioErrorClass('IdentityNotFound');
export const InputValidationError = rucioErrorClass('InputValidationError');
export const InvalidAccountType = rucioErrorClass('InvalidAccountType');
export const InvalidMetadata = rucioErrorClass('InvalidMetadata');
export const InvalidObject = rucioErrorClass('InvalidObject');
export const InvalidPath = rucioErrorClass('InvalidPath');
export const InvalidRSEExpression = rucioErrorClass('InvalidRSEExpression');
export const InvalidType = rucioErrorClass('InvalidType');
export const InvalidValueForKey = rucioErrorClass('InvalidValueForKey');
export const KeyNotFound = rucioErrorClass('KeyNotFound');
export const ReplicaIsLocked = rucioErrorClass('ReplicaIsLocked');
export const ReplicaNotFound = rucioErrorClass('ReplicaNotFound');
export const ResourceTemporaryUnavailable = rucioErrorClass('ResourceTemporaryUnavailable');
export const RSEAttributeNotFound = rucioErrorClass('RSEAttributeNotFound');
export const RSENotFound = rucioErrorClass('RSENotFound');
export const RSEOperationNotSupported = rucioErrorClass('RSEOperationNotSupported');
export const RSEProtocolDomainNotSupported = rucioErrorClass('RSEProtocolDomainNotSupported');
export const RSEProtocolNotSupported = rucioErrorClass('RSEProtocolNotSupported');
export const RSEProtocolPriorityError = rucioErrorClass('RSEProtocolPriorityError');
export const RucioException = rucioErrorClass('RucioException');
export const ScopeNotFound = rucioErrorClass('ScopeNotFound');
export const SortingAlgorithmNotSupported = rucioErrorClass('SortingAlgorithmNotSupported');
export const UnsupportedKeyType = rucioErrorClass('UnsupportedKeyType');
export const UnsupportedMetadataPlugin = rucioErrorClass('UnsupportedMetadataPlugin');
export const UnsupportedOperation = rucioErrorClass('UnsupportedOperation');
export const UnsupportedStatus = rucioErrorClass('UnsupportedStatus');
export const UnsupportedValueType = rucioErrorClass('UnsupportedValueType');

/**
 * Python's built-in exception names, which Rucio's REST layer also puts into `ExceptionClass`
 * for malformed requests (missing keys, bodies of the wrong type, unparsable paths).
 */
export const ValueError = rucioErrorClass('ValueError');
export const KeyError = rucioErrorClass('KeyError');
export const NotImplementedError_ = rucioErrorClass('NotImplementedError');
export const TypeError_ = rucioErrorClass('TypeError');

/** Replication rules, their locks and their transfers. */
export const DuplicateRule = rucioErrorClass('DuplicateRule');
export const InsufficientAccountLimit = rucioErrorClass('InsufficientAccountLimit');
export const InsufficientTargetRSEs = rucioErrorClass('InsufficientTargetRSEs');
export const InvalidReplicationRule = rucioErrorClass('InvalidReplicationRule');
export const InvalidRuleWeight = rucioErrorClass('InvalidRuleWeight');
export const InvalidSourceReplicaExpression = rucioErrorClass('InvalidSourceReplicaExpression');
export const ManualRuleApprovalBlocked = rucioErrorClass('ManualRuleApprovalBlocked');
export const ReplicationRuleCreationTemporaryFailed = rucioErrorClass('ReplicationRuleCreationTemporaryFailed');
export const RequestNotFound = rucioErrorClass('RequestNotFound');
export const RSEOverQuota = rucioErrorClass('RSEOverQuota');
export const RSEWriteBlocked = rucioErrorClass('RSEWriteBlocked');
export const RuleNotFound = rucioErrorClass('RuleNotFound');
export const RuleReplaceFailed = rucioErrorClass('RuleReplaceFailed');
export const StagingAreaRuleRequiresLifetime = rucioErrorClass('StagingAreaRuleRequiresLifetime');
