import { ConfigurationInvalidError, loadConfig, type ServiceConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logger.ts';
import { RedisServerMissingError } from '../infra/queue/redisServer.ts';
import { auditVerifyCommand } from './commands/auditVerify.ts';
import { bootstrapCommand } from './commands/bootstrap.ts';
import { eventsExportCommand } from './commands/eventsExport.ts';
import { eventsImportCommand } from './commands/eventsImport.ts';
import { projectionsRebuildCommand } from './commands/projectionsRebuild.ts';
import { projectionsStatusCommand } from './commands/projectionsStatus.ts';
import { replayCommand } from './commands/replay.ts';
import { revokeTokensCommand } from './commands/revokeTokens.ts';
import { transfersStatusCommand } from './commands/transfersStatus.ts';
import { workersStatusCommand } from './commands/workersStatus.ts';
import { startRuntime, type Roles } from './runtime.ts';

const USAGE = `Usage: dms <command>

  serve                      API, projections and workers in one process (the embedded default)
  api                        only the HTTP API (scaled out; projections run elsewhere)
  projector                  only the projections
  worker [--roles a,b]       only the reactor and the daemon workers (all roles, or those named)
  workers status [--json]    each daemon role's queue and last cycle
  transfers status [--json]  transfer requests per state and link, the oldest waiting, the last hour's failures
  projections status         checkpoint, head and lag of every projection
  projections rebuild <name> [--detach]
                             rebuild one projection beside the serving one, then switch reads
  replay <stream> [--from N] the events of one stream as JSON lines (for audits)
  audit verify               check every stream's hash chain; name the first broken link
  events export [file]       the whole event log as NDJSON (stdout without a file)
  events import [file]       append an exported log into an empty event store (stdin without a file)
  admin bootstrap            create the root account if it does not exist, then exit
  admin revoke-tokens <acct> end every session (token) of an account at once
  help                       this text

Configuration comes from environment variables; see README.md.`;

const ROLES: Record<string, Roles> = {
  serve: { api: true, projector: true, workers: true },
  api: { api: true, projector: false, workers: false },
  projector: { api: false, projector: true, workers: false },
  worker: { api: false, projector: false, workers: true },
};

const runService = async (config: ServiceConfig, roles: Roles): Promise<void> => {
  const logger = createLogger(config.logLevel);
  const runtime = await startRuntime({ ...config, workers: roles.workers && config.workers }, { ...roles, workers: roles.workers && config.workers }, logger);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    runtime.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
};

const main = async (args: string[]): Promise<number> => {
  const [command, ...rest] = args;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const roles = ROLES[command];
  if (roles) {
    const named = rest.indexOf('--roles');
    const daemonRoles = named >= 0 ? (rest[named + 1] ?? '').split(',').filter(Boolean) : undefined;
    await runService(config, daemonRoles ? { ...roles, daemonRoles } : roles);
    return -1;
  }
  if (command === 'workers' && rest[0] === 'status') return workersStatusCommand(config, rest.slice(1));
  if (command === 'transfers' && rest[0] === 'status') return transfersStatusCommand(config, rest.slice(1));
  if (command === 'projections' && rest[0] === 'status') return projectionsStatusCommand(config);
  if (command === 'projections' && rest[0] === 'rebuild' && rest[1]) {
    return projectionsRebuildCommand(config, rest[1], createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel), rest.slice(2));
  }
  if (command === 'audit' && rest[0] === 'verify') return auditVerifyCommand(config);
  if (command === 'events' && rest[0] === 'export') return eventsExportCommand(config, rest[1]);
  if (command === 'events' && rest[0] === 'import') return eventsImportCommand(config, rest[1]);
  if (command === 'replay' && rest[0]) return replayCommand(config, rest[0], rest.slice(1));
  if (command === 'admin' && rest[0] === 'bootstrap') return bootstrapCommand(config);
  if (command === 'admin' && rest[0] === 'revoke-tokens' && rest[1]) return revokeTokensCommand(config, rest[1]);
  console.error(USAGE);
  return 2;
};

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigurationInvalidError || error instanceof RedisServerMissingError) {
      console.error(error.message);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
