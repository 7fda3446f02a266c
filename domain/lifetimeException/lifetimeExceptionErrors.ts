import { rucioErrorClass } from '../shared/errors.ts';

/** The exceptions of lifetime exceptions. */
export const LifetimeExceptionDuplicate = rucioErrorClass('LifetimeExceptionDuplicate', 409);
export const LifetimeExceptionNotFound = rucioErrorClass('LifetimeExceptionNotFound', 404);
