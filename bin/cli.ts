import { Argument, Command, CommanderError, InvalidArgumentError, Option, type OutputConfiguration } from 'commander';
import { RULE_STATES } from '../domain/rule/rule.ts';
import { loadConfig, type ServiceConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logger.ts';
import type { Roles } from './runtime.ts';

/**
 * The `dms` command line (commander). Exit statuses: 0 done; 1 the command failed (a broken hash
 * chain, an import refused, an unexpected error); 2 the command line or the configuration is
 * wrong (an unknown command or option, a missing argument, a bad environment variable). The
 * service commands keep running until a signal stops them.
 */

/** What an action hands back: its exit status, or `running` for a service that stays up. */
export type Outcome = number | 'running';

export const USAGE_ERROR = 2;

const ROLES: Record<'serve' | 'api' | 'projector' | 'worker', Roles> = {
  serve: { api: true, projector: true, workers: true },
  api: { api: true, projector: false, workers: false },
  projector: { api: false, projector: true, workers: false },
  worker: { api: false, projector: false, workers: true },
};

const runService = async (config: ServiceConfig, roles: Roles): Promise<void> => {
  const logger = createLogger(config.logLevel, config.logFormat);
  const effective = { ...config, workers: roles.workers && config.workers };
  const effectiveRoles = { ...roles, workers: roles.workers && config.workers };
  // `dms serve` on several cores: API workers around this process (bin/cluster/clusterPrimary.ts).
  const starting =
    roles.api && roles.projector && config.apiWorkers > 1
      ? import('./cluster/clusterPrimary.ts').then(({ serveCluster }) =>
          serveCluster(effective, effectiveRoles, logger, config.apiWorkers),
        )
      : import('./runtime.ts').then(({ startRuntime }) => startRuntime(effective, effectiveRoles, logger));
  let signals = 0;
  const shutdown = (signal: string, exitCode = 0) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // A signal during the start (the API may already listen) stops what the start has made, once made.
    starting
      .then((runtime) => runtime.stop())
      .then(
        () => {
          logger.info('stopped');
          process.exit(exitCode);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'error while stopping');
          process.exit(1);
        },
      );
  };
  // Taken before the start: "API listening" is logged (and /ping answered) before the start returns,
  // and a SIGTERM meeting Node's default action then would leave the private Redis and its address behind.
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  const runtime = await starting;
  // The daemons start after the API listens; a service whose daemons cannot run stops.
  runtime.daemonsReady.catch(() => shutdown('the daemons could not start', 1));
};

const roleList = (value: string): string[] => value.split(',').filter(Boolean);

const revision = (value: string): bigint => {
  if (!/^\d{1,19}$/.test(value)) throw new InvalidArgumentError('expected a revision: a whole number from 0.');
  return BigInt(value);
};

const seconds = (value: string): number => {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('expected a number of seconds.');
  return Number(value);
};

const positiveCount = (value: string): number => {
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new InvalidArgumentError('expected a whole number from 1.');
  return Number(value);
};

const JSON_OPTION = ['--json', 'print one JSON document instead of text (for scripts)'] as const;
const WIDE_OPTION = [
  '--wide',
  'every table row on one line, however wide (default: fit the terminal, or 100 columns)',
] as const;

/**
 * The whole command line; `outcome` receives what the chosen action returned. `output` replaces
 * stdout and stderr for help and usage errors (tests).
 */
export const dmsProgram = (outcome: (result: Outcome) => void, output: OutputConfiguration = {}): Command => {
  // Every action reads the configuration first, so that --help works whatever the environment holds.
  const action =
    <A extends unknown[]>(run: (config: ServiceConfig, ...args: A) => Promise<Outcome>) =>
    async (...args: A): Promise<void> =>
      outcome(await run(loadConfig(), ...args));

  const program = new Command('dms')
    .description("dms: an event-sourced data management service speaking Rucio 39's REST API")
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput(output)
    .showHelpAfterError('(dms --help lists the commands)')
    .addHelpText(
      'after',
      '\nConfiguration comes from environment variables (DMS_DATA_DIR, DMS_EVENT_STORE, PORT, ...); see README.md.',
    );

  const service = (name: keyof typeof ROLES, description: string, rolesOption: 'shown' | 'hidden') => {
    const roles = new Option(
      '--roles <names>',
      'run only these daemon roles, comma-separated (default: all)',
    ).argParser(roleList);
    program
      .command(name)
      .description(description)
      .addOption(rolesOption === 'shown' ? roles : roles.hideHelp())
      .action(
        action(async (config, options: { roles?: string[] }) => {
          await runService(config, options.roles ? { ...ROLES[name], daemonRoles: options.roles } : ROLES[name]);
          return 'running';
        }),
      );
  };
  service('serve', 'API, projections and workers in one process (the embedded default)', 'shown');
  // --roles means nothing without workers; it stays accepted, as it always was.
  service('api', 'only the HTTP API (scaled out; projections run elsewhere)', 'hidden');
  service('projector', 'only the projections', 'hidden');
  service('worker', 'only the reactor and the daemon workers', 'shown');

  const workers = program.command('workers').description('the daemon roles: status');
  workers
    .command('status')
    .description("each daemon role's queue (waiting, active, delayed, failed jobs) and its last cycle")
    .option(...JSON_OPTION)
    .option(...WIDE_OPTION)
    .action(
      action(async (config, options: { json?: boolean; wide?: boolean }) =>
        (await import('./commands/workersStatus.ts')).workersStatusCommand(config, options),
      ),
    );

  const transfers = program
    .command('transfers')
    .description('the transfer requests: status, path <source> <destination>');
  transfers
    .command('status')
    .description("requests per state and link, the oldest waiting in each state, the last hour's failures")
    .option(...JSON_OPTION)
    .option(...WIDE_OPTION)
    .action(
      action(async (config, options: { json?: boolean; wide?: boolean }) =>
        (await import('./commands/transfersStatus.ts')).transfersStatusCommand(config, options),
      ),
    );
  transfers
    .command('path <source> <destination>')
    .description(
      'the path the conveyor takes between two RSEs (multihop included), each copy with its protocols and tool, tape staging and tokens',
    )
    .option(
      '--tokens',
      'ask the trusted provider for the tokens of the copies that use them, and show what each grants',
    )
    .option(...JSON_OPTION)
    .option(...WIDE_OPTION)
    .action(
      action(
        async (
          config,
          source: string,
          destination: string,
          options: { json?: boolean; wide?: boolean; tokens?: boolean },
        ) => (await import('./commands/transfersPath.ts')).transfersPathCommand(config, source, destination, options),
      ),
    );

  const projections = program.command('projections').description('the read models: status, rebuild <name>');
  projections
    .command('status')
    .description('checkpoint, head of the event log, lag and status of every projection, and the projectors alive')
    .option(...JSON_OPTION)
    .option(...WIDE_OPTION)
    .action(
      action(async (config, options: { json?: boolean; wide?: boolean }) =>
        (await import('./commands/projectionsStatus.ts')).projectionsStatusCommand(config, options),
      ),
    );
  projections
    .command('rebuild')
    .description(
      'rebuild one projection beside the serving one, then switch reads over, showing progress (exit 2 for an unknown name)',
    )
    .argument('<name>', 'the projection (dms projections status lists them)')
    .option('--detach', 'return once a running projector has the request, without following it')
    .action(
      action(async (config, name: string, options: { detach?: boolean }) =>
        (await import('./commands/projectionsRebuild.ts')).projectionsRebuildCommand(
          config,
          name,
          createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, config.logFormat),
          options,
        ),
      ),
    );

  program
    .command('replay')
    .description('the events of one stream, oldest first, as JSON lines (exit 1 when it has none)')
    .argument('<stream>', 'a stream name: account-jdoe, did-user.jdoe:file1, rule-<id>, ...')
    .option('--from <revision>', 'the first revision to print (default: 0)', revision)
    .option('--json', 'print one JSON document with every event instead of one line each')
    .action(
      action(async (config, stream: string, options: { from?: bigint; json?: boolean }) =>
        (await import('./commands/replay.ts')).replayCommand(config, stream, options),
      ),
    );

  const audit = program.command('audit').description('the tamper evidence of the event log: verify, anchor');
  audit
    .command('verify')
    .description(
      "recompute every stream's hash chain and the log chain, and name the first broken link (exit 1 at a break)",
    )
    .option('--anchor <file>', 'also check the log against an anchor `dms audit anchor` wrote: a cut tail shows')
    .option('--key-file <file>', "the anchor's signing key")
    .option(...JSON_OPTION)
    .action(
      action(async (config, options: { json?: boolean; anchor?: string; keyFile?: string }) =>
        (await import('./commands/auditVerify.ts')).auditVerifyCommand(config, options),
      ),
    );
  audit
    .command('anchor')
    .description("write the log chain's head (an anchor) to keep elsewhere, for `audit verify --anchor`")
    .argument('[file]', 'where to write it (default: stdout)')
    .option('--key-file <file>', 'sign the anchor with HMAC-SHA256 under the key in this file')
    .option(
      '--checkpoint-every <events>',
      "EventStoreDB: keep the chain's value every this many events too (default: 10000)",
      positiveCount,
    )
    .action(
      action(async (config, file: string | undefined, options: { keyFile?: string; checkpointEvery?: number }) =>
        (await import('./commands/auditAnchor.ts')).auditAnchorCommand(config, file, options),
      ),
    );

  const events = program.command('events').description('the event log as NDJSON: export [file], import [file]');
  events
    .command('export')
    .description('write the whole event log as NDJSON, progress on stderr')
    .argument('[file]', 'where to write it (default: stdout)')
    .action(
      action(async (config, file: string | undefined) =>
        (await import('./commands/eventsExport.ts')).eventsExportCommand(config, file),
      ),
    );
  events
    .command('import')
    .description('append an exported log into an empty event store, checking its hash chains (exit 1 when refused)')
    .argument('[file]', 'what to read (default: stdin)')
    .action(
      action(async (config, file: string | undefined) =>
        (await import('./commands/eventsImport.ts')).eventsImportCommand(config, file),
      ),
    );

  const wait = program.command('wait').description('wait for a state: rule <id> <state>');
  wait
    .command('rule')
    .description('wait until a rule is in a state (exit 1 when the time runs out first), as GET /rules/{id} shows it')
    .argument('<id>', 'the rule id')
    .addArgument(new Argument('<state>', 'the state to wait for').choices(RULE_STATES))
    .option('--timeout <seconds>', 'give up after this long', seconds, 60)
    .option('--json', 'print the rule as GET /rules/{id} answers it')
    .action(
      action(async (config, id: string, state: string, options: { timeout: number; json?: boolean }) =>
        (await import('./commands/waitRule.ts')).waitRuleCommand(config, id, state, {
          timeoutSeconds: options.timeout,
          json: options.json,
        }),
      ),
    );
  const auth = program.command('auth').description('authentication: issuers (the trusted OpenID providers)');
  auth
    .command('issuers')
    .description(
      'the OpenID providers of DMS_OIDC_PROVIDERS and whether their keys were fetched (--check: fetch them now; exit 1 if one fails)',
    )
    .option('--check', 'fetch each provider’s discovery document and keys from this machine now')
    .option(...JSON_OPTION)
    .action(
      action(async (config, options: { json?: boolean; check?: boolean }) =>
        (await import('./commands/authIssuers.ts')).authIssuersCommand(config, options),
      ),
    );

  const admin = program.command('admin').description('administration: bootstrap, revoke-tokens <account>');
  admin
    .command('bootstrap')
    .description('create the root account from DMS_ROOT_* if it does not exist, then exit')
    .action(action(async (config) => (await import('./commands/bootstrap.ts')).bootstrapCommand(config)));
  admin
    .command('revoke-tokens')
    .description('end every session (token) of an account at once')
    .argument('<account>', 'the account')
    .action(
      action(async (config, account: string) =>
        (await import('./commands/revokeTokens.ts')).revokeTokensCommand(config, account),
      ),
    );

  return program;
};

/** Runs the command line: the exit status, or `running` once a service has started. */
export const runDms = async (argv: readonly string[], output: OutputConfiguration = {}): Promise<Outcome> => {
  let result: Outcome = 0;
  const program = dmsProgram((outcome) => (result = outcome), output);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    // Help asked for is 0; help shown for a missing command, and every usage error, is 2.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_ERROR;
    throw error;
  }
  return result;
};
