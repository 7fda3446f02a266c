/**
 * Domain errors name the exception class Rucio would raise (`DataIdentifierNotFound`,
 * `Duplicate`, ...) and carry the HTTP status Rucio answers it with on most routes, declared
 * beside each class below; a route that answers differently says so (`errors` in api/route.ts).
 * The message is what the client sees in `ExceptionMessage`.
 */
export class RucioError extends Error {
  constructor(
    readonly exceptionClass: string,
    message: string,
    /** Default 500: an exception Rucio does not expect is an internal error. */
    readonly httpStatus: number = 500,
  ) {
    super(message);
    this.name = exceptionClass;
  }
}

export type RucioErrorClass = {
  new (message?: string): RucioError;
  readonly exceptionClass: string;
  readonly httpStatus: number;
};

/**
 * Declares one error class per Rucio exception name, with the status Rucio answers it with
 * (default 500, as Rucio answers the exceptions it does not map); `instanceof` works on the result.
 */
export const rucioErrorClass = (exceptionClass: string, httpStatus = 500): RucioErrorClass => {
  const errorClass = class extends RucioError {
    static readonly exceptionClass = exceptionClass;
    static readonly httpStatus = httpStatus;
    constructor(message?: string) {
      // Rucio answers the literal "None" when an exception carries no message.
      super(exceptionClass, message ?? 'None', httpStatus);
    }
  };
  Object.defineProperty(errorClass, 'name', { value: exceptionClass });
  return errorClass;
};

export const AccessDenied = rucioErrorClass('AccessDenied', 401);
export const AccountNotFound = rucioErrorClass('AccountNotFound', 404);
export const CannotAuthenticate = rucioErrorClass('CannotAuthenticate', 401);
export const ConfigNotFound = rucioErrorClass('ConfigNotFound', 404);
export const ConfigurationError = rucioErrorClass('ConfigurationError', 400);
export const DatabaseException = rucioErrorClass('DatabaseException');
export const DataIdentifierAlreadyExists = rucioErrorClass('DataIdentifierAlreadyExists', 409);
export const DataIdentifierNotFound = rucioErrorClass('DataIdentifierNotFound', 404);
export const DIDFilterSyntaxError = rucioErrorClass('DIDFilterSyntaxError', 400);
export const Duplicate = rucioErrorClass('Duplicate', 409);
export const DuplicateContent = rucioErrorClass('DuplicateContent', 409);
export const FileAlreadyExists = rucioErrorClass('FileAlreadyExists', 409);
export const FileConsistencyMismatch = rucioErrorClass('FileConsistencyMismatch', 412);
export const IdentityError = rucioErrorClass('IdentityError', 400);
export const IdentityNotFound = rucioErrorClass('IdentityNotFound', 401);
export const InputValidationError = rucioErrorClass('InputValidationError', 400);
export const InvalidAccountType = rucioErrorClass('InvalidAccountType', 400);
export const InvalidMetadata = rucioErrorClass('InvalidMetadata', 400);
export const InvalidObject = rucioErrorClass('InvalidObject', 400);
export const InvalidRequest = rucioErrorClass('InvalidRequest', 400);
export const InvalidPath = rucioErrorClass('InvalidPath', 400);
export const InvalidRSEExpression = rucioErrorClass('InvalidRSEExpression', 400);
export const InvalidType = rucioErrorClass('InvalidType', 400);
export const InvalidValueForKey = rucioErrorClass('InvalidValueForKey', 400);
export const KeyNotFound = rucioErrorClass('KeyNotFound', 404);
export const ReplicaIsLocked = rucioErrorClass('ReplicaIsLocked', 423);
export const ReplicaNotFound = rucioErrorClass('ReplicaNotFound', 404);
export const ResourceTemporaryUnavailable = rucioErrorClass('ResourceTemporaryUnavailable', 503);
export const RSEAttributeNotFound = rucioErrorClass('RSEAttributeNotFound', 404);
export const RSENotFound = rucioErrorClass('RSENotFound', 404);
export const RSEOperationNotSupported = rucioErrorClass('RSEOperationNotSupported', 404);
export const RSEProtocolDomainNotSupported = rucioErrorClass('RSEProtocolDomainNotSupported', 404);
export const RSEProtocolNotSupported = rucioErrorClass('RSEProtocolNotSupported', 404);
export const RSEProtocolPriorityError = rucioErrorClass('RSEProtocolPriorityError', 409);
export const RucioException = rucioErrorClass('RucioException');
export const ScopeNotFound = rucioErrorClass('ScopeNotFound', 404);
export const SortingAlgorithmNotSupported = rucioErrorClass('SortingAlgorithmNotSupported', 404);
export const UnsupportedKeyType = rucioErrorClass('UnsupportedKeyType', 400);
export const UnsupportedMetadataPlugin = rucioErrorClass('UnsupportedMetadataPlugin', 400);
export const UnsupportedOperation = rucioErrorClass('UnsupportedOperation', 409);
export const UnsupportedRequestedContentType = rucioErrorClass('UnsupportedRequestedContentType', 406);
export const UnsupportedStatus = rucioErrorClass('UnsupportedStatus', 409);
export const UnsupportedValueType = rucioErrorClass('UnsupportedValueType', 400);

/**
 * Python's built-in exception names, which Rucio's REST layer also puts into `ExceptionClass`
 * for malformed requests (missing keys, bodies of the wrong type, unparsable paths).
 */
export const ValueError = rucioErrorClass('ValueError', 400);
export const KeyError = rucioErrorClass('KeyError', 400);
export const NotImplementedError_ = rucioErrorClass('NotImplementedError');
export const TypeError_ = rucioErrorClass('TypeError', 400);

/** Our own operations routes (`/admin/projections`), which Rucio does not have. */
export const ProjectionNotFound = rucioErrorClass('ProjectionNotFound', 404);

/**
 * Rucio exceptions nothing here raises yet, declared with Rucio's statuses so that the first use
 * answers as Rucio does.
 */
export const CannotAuthorize = rucioErrorClass('CannotAuthorize', 401);
export const CounterNotFound = rucioErrorClass('CounterNotFound', 404);
export const DuplicateCriteriaInDIDFilter = rucioErrorClass('DuplicateCriteriaInDIDFilter', 400);
export const ReplicationRuleCreationTemporaryFailed = rucioErrorClass('ReplicationRuleCreationTemporaryFailed', 409);
export const ScratchDiskLifetimeConflict = rucioErrorClass('ScratchDiskLifetimeConflict', 409);
export const VONotFound = rucioErrorClass('VONotFound', 404);

/** Signed URLs: the storage keys of an RSE are not configured (Rucio's, without a status: 500). */
export const ErrorLoadingCredentials = rucioErrorClass('ErrorLoadingCredentials');
