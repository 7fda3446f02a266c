/**
 * Skips the running test or hook, first printing why under its title, so that a reader of the run
 * sees each skip's reason (a server URL that is not set, a tool this machine lacks) beside it.
 * A function declaration, so that the compiler knows code after a call does not run.
 */
export function skipBecause(context: Mocha.Context, reason: string): never {
  console.log(`      skipped: ${reason}`);
  return context.skip();
}
