import { EnvironmentError } from '../infra/environmentError.ts';
import { runDms, USAGE_ERROR } from './cli.ts';

/** `bin/dms`: the command line (bin/cli.ts) and its exit status. */

// `dms workers status | head`: the reader has gone, so the output is done with; no stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
runDms(process.argv.slice(2)).then(
  (outcome) => {
    if (outcome !== 'running') process.exit(outcome);
  },
  (error: unknown) => {
    // What the environment gets wrong is said in a sentence, without a stack trace.
    if (error instanceof EnvironmentError) {
      console.error(error.message);
      process.exit(USAGE_ERROR);
    }
    console.error(error);
    process.exit(1);
  },
);
