import { rucioErrorClass } from '../shared/errors.ts';

/** The exceptions of transfer requests. */
export const RequestNotFound = rucioErrorClass('RequestNotFound', 404);
