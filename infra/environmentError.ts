/**
 * What the environment gets wrong (a bad variable, a missing program, a port or data directory
 * taken): `bin/dms` says it in a sentence and exits with the usage status, without a stack trace.
 * A class of its own, in a module that loads nothing, so that the command line can recognise
 * these errors without loading the service to do so.
 */
export class EnvironmentError extends Error {}
