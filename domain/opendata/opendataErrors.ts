import { rucioErrorClass } from '../shared/errors.ts';

/**
 * The open data catalogue: Rucio's open data routes answer 400 for every exception but
 * AccessDenied, the two not-found ones and AlreadyExists.
 */
export const OpenDataError = rucioErrorClass('OpenDataError', 400);
export const OpenDataDataIdentifierAlreadyExists = rucioErrorClass('OpenDataDataIdentifierAlreadyExists', 409);
export const OpenDataDataIdentifierNotFound = rucioErrorClass('OpenDataDataIdentifierNotFound', 404);
export const OpenDataDuplicateDOI = rucioErrorClass('OpenDataDuplicateDOI', 400);
export const OpenDataDuplicateRecordID = rucioErrorClass('OpenDataDuplicateRecordID', 400);
export const OpenDataInvalidState = rucioErrorClass('OpenDataInvalidState', 400);
export const OpenDataInvalidStateUpdate = rucioErrorClass('OpenDataInvalidStateUpdate', 400);
