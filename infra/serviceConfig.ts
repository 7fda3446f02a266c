import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { readOidcProviders, type OidcProviderConfig } from './oidcProviders.ts';
import { readRseAccounts, RseAccountsInvalid } from './security/rseAccounts.ts';
import { EnvironmentError } from './environmentError.ts';

/**
 * Configuration comes only from the environment, validated at start. A bad value stops the
 * service with a message that names the variable. Defaults suit one machine (the embedded mode).
 */
const booleanText = z.string().transform((value, issue) => {
  const lower = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(lower)) return false;
  issue.addIssue({ code: 'custom', message: 'expected true or false' });
  return z.NEVER;
});

const integerText = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

const environmentSchema = z.object({
  /** TCP port of the HTTP API. */
  PORT: integerText(0, 65535).default(8080),
  /** Address the API listens on; loopback by default, so nothing is exposed by accident. */
  DMS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Where the embedded mode keeps its SQLite files and the private Redis's append-only file. */
  DMS_DATA_DIR: z.string().min(1).default('./data'),
  /** The root account's userpass login, created at first start. */
  DMS_ROOT_USERNAME: z.string().min(1).max(255).default('ddmlab'),
  DMS_ROOT_PASSWORD: z.string().min(1).default('secret'),
  DMS_ROOT_EMAIL: z.string().default('root@localhost'),
  /** `sqlite` (files under DMS_DATA_DIR) or a KurrentDB (25.1 or later) connection string `esdb://...` or `kurrentdb://...`. */
  DMS_EVENT_STORE: z
    .string()
    .default('sqlite')
    .refine(
      (value) => value === 'sqlite' || /^(esdb|kurrentdb)(\+discover)?:\/\//.test(value),
      'expected sqlite or an esdb:// or kurrentdb:// URL',
    ),
  /** `sqlite` (files under DMS_DATA_DIR) or a MongoDB connection string `mongodb://...`. */
  DMS_READ_STORE: z
    .string()
    .default('sqlite')
    .refine(
      (value) => value === 'sqlite' || /^mongodb(\+srv)?:\/\//.test(value),
      'expected sqlite or a mongodb:// URL',
    ),
  /** An existing Redis; without it the service starts a private redis-server from the PATH. */
  REDIS_URL: z
    .string()
    .refine((value) => /^rediss?:\/\//.test(value), 'expected a redis:// URL')
    .optional(),
  /** Prefix of this deployment's BullMQ keys in Redis, so deployments (or test runs) can share one Redis. */
  DMS_QUEUE_PREFIX: z
    .string()
    .regex(/^[\w.-]{1,64}$/, 'expected letters, digits, _, . or -')
    .default('dms'),
  /** Token lifetime in seconds (Rucio: one hour). */
  DMS_TOKEN_LIFETIME_SECONDS: integerText(1, 31 * 24 * 3600).default(3600),
  /**
   * How long a request waits for the read models: a write until they show it (past this it is
   * answered 503, stored but not yet readable), any request after a start until they show the
   * log as it stood then (api/startCatchUp.ts). 0: nothing waits (the write side measured alone).
   */
  DMS_READ_YOUR_WRITES_TIMEOUT_MS: integerText(0, 600_000).default(30_000),
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  DMS_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * `pretty`: one readable line per entry (time, level, message, fields), for people; `json`: one
   * JSON document per line (pino's), for log collectors. Default: pretty when standard output is
   * a terminal, json otherwise.
   */
  DMS_LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Header a TLS-terminating proxy sets to the client certificate's DN (x509 login); unset = off. */
  DMS_X509_DN_HEADER: z.string().min(1).optional(),
  /** Header a Kerberos-authenticating proxy sets to the principal (gss login); unset = off. */
  DMS_GSS_REMOTE_USER_HEADER: z.string().min(1).optional(),
  /**
   * Behind a reverse proxy: the client's address (for throttling failed logins, and logged) is
   * the last one the proxy appended to X-Forwarded-For instead of the connection's. Off by
   * default: a client could name any address itself.
   */
  DMS_TRUST_PROXY: booleanText.default(false),
  /** Largest request body accepted, in bytes (bulk registrations are large). */
  DMS_MAX_BODY_BYTES: integerText(1024, 2 ** 31).default(256 * 1024 * 1024),
  /**
   * How long a connection may take, in milliseconds (docs/security.md, "Connections"): its
   * request's headers; a pause in its body; its whole request (headers and body); idle between
   * requests (keep-alive). A request too slow is answered 408 and the connection closed.
   */
  DMS_HEADERS_TIMEOUT_MS: integerText(1000, 600_000).default(20_000),
  DMS_BODY_IDLE_TIMEOUT_MS: integerText(1000, 600_000).default(20_000),
  DMS_REQUEST_TIMEOUT_MS: integerText(1000, 3_600_000).default(300_000),
  DMS_KEEP_ALIVE_TIMEOUT_MS: integerText(1000, 600_000).default(5000),
  /** Connections one client address may hold open at once, when not behind DMS_TRUST_PROXY; 0: no bound. */
  DMS_MAX_CONNECTIONS_PER_ADDRESS: integerText(0, 1_000_000).default(256),
  /** Start the background workers in `dms serve`; off for API-only processes. */
  DMS_WORKERS: booleanText.default(true),
  /**
   * Seconds a daemon job stays with a worker process that stopped renewing it (killed, frozen)
   * before another process takes it over, and how often workers look for such jobs (BullMQ's
   * `lockDuration` and `stalledInterval`; 30 s as BullMQ's own default).
   */
  DMS_JOB_LOCK_SECONDS: integerText(1, 3600).default(30),
  /**
   * The projections run on threads of their own, one per projection group, so that they write
   * in parallel and beside the API; false: all on the process's main thread (tests of upcasters).
   */
  DMS_PROJECTION_THREAD: booleanText.default(true),
  /**
   * How the projections are grouped (projections/index.ts): `groups`, each group written on its
   * own thread (or process) and, on SQLite, into its own file `readmodels-<group>.sqlite`; or
   * `single`, every projection in one group, one thread and `readmodels.sqlite`, as before issue
   * 30 (a one-core machine; the benchmarks' baseline). Changing it rebuilds every projection.
   */
  DMS_PROJECTION_LAYOUT: z.enum(['groups', 'single']).default('groups'),
  /**
   * Threads the projection groups of a process run on, the groups dealt out among them; default
   * one per core, at most one per group. A thread beyond the cores writes no faster (SQLite's
   * writes hold the thread; two threads on a core only take turns) and costs its start (about a
   * quarter of a second of CPU, several on a loaded machine) and memory.
   */
  DMS_PROJECTION_THREADS: integerText(1, 64).optional(),
  /**
   * Seconds a generation replaced by a rebuild stays on disk after reads switch away from it, for
   * API processes that have not heard of the switch yet; then its tables are dropped (also at the
   * next start, for one a stop left behind). 0 in a process that serves its own reads.
   */
  DMS_GENERATION_GRACE_SECONDS: integerText(0, 3600).default(30),
  /**
   * The process that writes the SQLite event log commits on a thread of its own, so that a group
   * commit's fsync does not stop its event loop; false: on its main thread.
   */
  DMS_LOG_WRITER_THREAD: booleanText.default(true),
  /**
   * API worker processes of `dms serve`, sharing its port (bin/cluster/); default: one per core.
   * 1 serves the API in the one process that also projects and runs the daemons.
   */
  DMS_API_WORKERS: integerText(1, 256).optional(),
  /**
   * Who may read `GET /metrics` on the API port, without a token: `loopback` (clients on this
   * machine; behind DMS_TRUST_PROXY, the forwarded client's address counts), `open` (anyone who
   * reaches the port) or `off` (not served there). See docs/security.md.
   */
  DMS_METRICS: z.enum(['loopback', 'open', 'off']).default('loopback'),
  /**
   * A port of its own, on DMS_HOST, that serves only `/metrics`, to anyone who reaches it: for
   * Prometheus on an internal network, and for `dms projector` and `dms worker`, which have no
   * API port. Unset: none.
   */
  DMS_METRICS_PORT: integerText(0, 65535).optional(),
  /**
   * The request and response header names spoken: `svc` (the specification's `X-Svc-*` only) or
   * `rucio`, where every `X-Rucio-*` request header is also read as its `X-Svc-*` twin and every
   * `X-Svc-*` response header is also sent as `X-Rucio-*`, so the stock Rucio client works
   * unmodified (api/clientHeaders.ts).
   */
  DMS_CLIENT_HEADERS: z
    .string()
    .transform((value) => value.trim().toLowerCase())
    .pipe(z.enum(['svc', 'rucio'], { error: 'expected svc (X-Svc-* headers only) or rucio (X-Rucio-* too)' }))
    .default('svc'),
  /**
   * A JSON file of the trusted OpenID providers, in the shape of Rucio's `idpsecrets.json`
   * (infra/oidcProviders.ts, docs/security.md). Unset: no OIDC login, and JWTs are not accepted.
   */
  DMS_OIDC_PROVIDERS: z.string().min(1).optional(),
  /**
   * A JSON file in the format of Rucio's `rse-accounts.cfg`: the storage keys signed URLs are
   * made with, per RSE id or name (infra/security/rseAccounts.ts). Unset: no URL is signed.
   */
  DMS_RSE_ACCOUNTS: z
    .string()
    .min(1)
    .transform((path, issue) => {
      try {
        readRseAccounts(resolve(path));
        return resolve(path);
      } catch (error) {
        if (!(error instanceof RseAccountsInvalid)) throw error;
        issue.addIssue({ code: 'custom', message: error.message });
        return z.NEVER;
      }
    })
    .optional(),
  /**
   * The password of `messaging-hermes.username` at the message broker hermes sends to (the other
   * broker options are in `/config`, docs/operations.md "Messages to a broker"); kept out of the
   * configuration, which is an event log.
   */
  DMS_MESSAGING_HERMES_PASSWORD: z.string().optional(),
  /** A MaxMind City database file (`.mmdb`) that locates clients by IP for `geoip` replica sorting. */
  DMS_GEOIP_DB: z
    .string()
    .min(1)
    .refine((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    }, 'expected a readable MaxMind database file')
    .transform((path) => resolve(path))
    .optional(),
});

export type ServiceConfig = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  rootUsername: string;
  rootPassword: string;
  rootEmail: string;
  /** True when the root password is the documented default and start-up should warn. */
  rootPasswordIsDefault: boolean;
  eventStore: { kind: 'sqlite' } | { kind: 'esdb'; url: string };
  /**
   * With MongoDB, `groupUrls` names a database (on any server) for some projection groups
   * (`DMS_READ_STORE_<GROUP>`); the others are in `url`'s.
   */
  readStore: { kind: 'sqlite' } | { kind: 'mongodb'; url: string; groupUrls: Readonly<Record<string, string>> };
  redisUrl: string | undefined;
  queuePrefix: string;
  tokenLifetimeSeconds: number;
  readYourWritesTimeoutMs: number;
  logLevel: string;
  /** DMS_LOG_FORMAT, resolved: a terminal gets `pretty` unless told otherwise. */
  logFormat: 'json' | 'pretty';
  x509DnHeader: string | undefined;
  gssRemoteUserHeader: string | undefined;
  trustProxy: boolean;
  maxBodyBytes: number;
  /** Bounds on each connection's time (milliseconds) and on connections per address (0: none). */
  connections: Readonly<{
    headersTimeoutMs: number;
    bodyIdleTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxPerAddress: number;
  }>;
  workers: boolean;
  /** Seconds before a job of a dead worker process is taken over (DMS_JOB_LOCK_SECONDS). */
  jobLockSeconds: number;
  projectionThread: boolean;
  projectionLayout: 'groups' | 'single';
  /** DMS_PROJECTION_THREADS (default the cores); never more than the groups a process runs. */
  projectionThreads: number;
  /** DMS_GENERATION_GRACE_SECONDS, in ms. */
  generationGraceMs: number;
  /** Commit the SQLite event log on a thread of its own (DMS_LOG_WRITER_THREAD). */
  logWriterThread: boolean;
  /** API worker processes of `dms serve` (DMS_API_WORKERS; 1: none, the API runs in the one process). */
  apiWorkers: number;
  metrics: 'loopback' | 'open' | 'off';
  metricsPort: number | undefined;
  /** `svc`: X-Svc-* headers only; `rucio`: X-Rucio-* ones too (DMS_CLIENT_HEADERS). */
  clientHeaders: 'svc' | 'rucio';
  /** The trusted OpenID providers (DMS_OIDC_PROVIDERS); empty when none. */
  oidcProviders: readonly OidcProviderConfig[];
  /** The RSE accounts file signed URLs are made with (DMS_RSE_ACCOUNTS), if any. */
  rseAccounts: string | undefined;
  /** The MaxMind database `geoip` sorting locates clients with (DMS_GEOIP_DB), if any. */
  geoipDatabase: string | undefined;
  /** The message broker password of hermes (DMS_MESSAGING_HERMES_PASSWORD), if any. */
  messagingPassword: string | undefined;
}>;

/**
 * A configuration handed to another thread (the projection thread gets its process's) as it
 * arrives there: structured-cloned data, checked against the shape rather than taken on trust.
 */
const serviceConfigSchema = z.object({
  port: z.number(),
  host: z.string(),
  dataDir: z.string(),
  rootUsername: z.string(),
  rootPassword: z.string(),
  rootEmail: z.string(),
  rootPasswordIsDefault: z.boolean(),
  eventStore: z.union([
    z.object({ kind: z.literal('sqlite') }),
    z.object({ kind: z.literal('esdb'), url: z.string() }),
  ]),
  readStore: z.union([
    z.object({ kind: z.literal('sqlite') }),
    z.object({ kind: z.literal('mongodb'), url: z.string(), groupUrls: z.record(z.string(), z.string()) }),
  ]),
  redisUrl: z.string().or(z.undefined()),
  queuePrefix: z.string(),
  tokenLifetimeSeconds: z.number(),
  readYourWritesTimeoutMs: z.number(),
  logLevel: z.string(),
  logFormat: z.enum(['json', 'pretty']),
  x509DnHeader: z.string().or(z.undefined()),
  gssRemoteUserHeader: z.string().or(z.undefined()),
  trustProxy: z.boolean(),
  maxBodyBytes: z.number(),
  connections: z.object({
    headersTimeoutMs: z.number(),
    bodyIdleTimeoutMs: z.number(),
    requestTimeoutMs: z.number(),
    keepAliveTimeoutMs: z.number(),
    maxPerAddress: z.number(),
  }),
  workers: z.boolean(),
  jobLockSeconds: z.number(),
  projectionThread: z.boolean(),
  projectionLayout: z.enum(['groups', 'single']),
  projectionThreads: z.number(),
  generationGraceMs: z.number(),
  logWriterThread: z.boolean(),
  apiWorkers: z.number(),
  metrics: z.enum(['loopback', 'open', 'off']),
  metricsPort: z.number().or(z.undefined()),
  clientHeaders: z.enum(['svc', 'rucio']),
  oidcProviders: z.array(
    z.object({
      nickname: z.string(),
      issuer: z.string(),
      clientId: z.string(),
      clientSecret: z.string(),
      redirectUris: z.array(z.string()),
    }),
  ),
  rseAccounts: z.string().or(z.undefined()),
  geoipDatabase: z.string().or(z.undefined()),
  messagingPassword: z.string().or(z.undefined()),
}) satisfies z.ZodType<ServiceConfig>;

export const parseServiceConfig = (value: unknown): ServiceConfig => serviceConfigSchema.parse(value);

export class ConfigurationInvalidError extends EnvironmentError {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
    this.name = 'ConfigurationInvalidError';
  }
}

/**
 * `DMS_READ_STORE_<GROUP>=mongodb://...`: a projection group's collections in a database of their
 * own (the group's name in capitals; which groups exist is checked where they are known). Only
 * with a MongoDB read store: on SQLite every group has its file under DMS_DATA_DIR.
 */
const groupReadStores = (
  environment: NodeJS.ProcessEnv,
  mongodb: boolean,
): { urls: Record<string, string>; problems: string[] } => {
  const urls: Record<string, string> = {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(environment)) {
    const match = /^DMS_READ_STORE_([A-Z]+)$/.exec(key);
    if (!match || value === undefined) continue;
    if (!mongodb) problems.push(`${key}=${JSON.stringify(value)}: only with a MongoDB DMS_READ_STORE`);
    else if (!/^mongodb(\+srv)?:\/\//.test(value))
      problems.push(`${key}=${JSON.stringify(value)}: expected a mongodb:// URL`);
    else urls[match[1]!.toLowerCase()] = value;
  }
  return { urls, problems };
};

/** Reads and validates the environment; throws ConfigurationInvalidError naming each bad variable. */
export const loadServiceConfig = (environment: NodeJS.ProcessEnv = process.env): ServiceConfig => {
  const known = Object.fromEntries(
    Object.keys(environmentSchema.shape)
      .filter((key) => environment[key] !== undefined)
      .map((key) => [key, environment[key]]),
  );
  const parsed = environmentSchema.safeParse(known);
  if (!parsed.success) {
    throw new ConfigurationInvalidError(
      parsed.error.issues.map(
        (issue) => `${String(issue.path[0])}=${JSON.stringify(known[String(issue.path[0])])}: ${issue.message}`,
      ),
    );
  }
  const env = parsed.data;
  if (env.DMS_HEADERS_TIMEOUT_MS > env.DMS_REQUEST_TIMEOUT_MS)
    throw new ConfigurationInvalidError([
      `DMS_HEADERS_TIMEOUT_MS=${env.DMS_HEADERS_TIMEOUT_MS}: must not exceed DMS_REQUEST_TIMEOUT_MS (${env.DMS_REQUEST_TIMEOUT_MS})`,
    ]);
  const groups = groupReadStores(environment, env.DMS_READ_STORE !== 'sqlite');
  if (groups.problems.length > 0) throw new ConfigurationInvalidError(groups.problems);
  const oidc = env.DMS_OIDC_PROVIDERS === undefined ? { providers: [] } : readOidcProviders(env.DMS_OIDC_PROVIDERS);
  if ('problem' in oidc)
    throw new ConfigurationInvalidError([
      `DMS_OIDC_PROVIDERS=${JSON.stringify(env.DMS_OIDC_PROVIDERS)}: ${oidc.problem}`,
    ]);
  return {
    port: env.PORT,
    host: env.DMS_HOST,
    dataDir: resolve(env.DMS_DATA_DIR),
    rootUsername: env.DMS_ROOT_USERNAME,
    rootPassword: env.DMS_ROOT_PASSWORD,
    rootEmail: env.DMS_ROOT_EMAIL,
    rootPasswordIsDefault: environment.DMS_ROOT_PASSWORD === undefined,
    eventStore: env.DMS_EVENT_STORE === 'sqlite' ? { kind: 'sqlite' } : { kind: 'esdb', url: env.DMS_EVENT_STORE },
    readStore:
      env.DMS_READ_STORE === 'sqlite'
        ? { kind: 'sqlite' }
        : { kind: 'mongodb', url: env.DMS_READ_STORE, groupUrls: groups.urls },
    redisUrl: env.REDIS_URL,
    queuePrefix: env.DMS_QUEUE_PREFIX,
    tokenLifetimeSeconds: env.DMS_TOKEN_LIFETIME_SECONDS,
    readYourWritesTimeoutMs: env.DMS_READ_YOUR_WRITES_TIMEOUT_MS,
    logLevel: env.DMS_LOG_LEVEL,
    logFormat: env.DMS_LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    x509DnHeader: env.DMS_X509_DN_HEADER,
    gssRemoteUserHeader: env.DMS_GSS_REMOTE_USER_HEADER,
    trustProxy: env.DMS_TRUST_PROXY,
    maxBodyBytes: env.DMS_MAX_BODY_BYTES,
    connections: {
      headersTimeoutMs: env.DMS_HEADERS_TIMEOUT_MS,
      bodyIdleTimeoutMs: env.DMS_BODY_IDLE_TIMEOUT_MS,
      requestTimeoutMs: env.DMS_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.DMS_KEEP_ALIVE_TIMEOUT_MS,
      maxPerAddress: env.DMS_MAX_CONNECTIONS_PER_ADDRESS,
    },
    workers: env.DMS_WORKERS,
    jobLockSeconds: env.DMS_JOB_LOCK_SECONDS,
    projectionThread: env.DMS_PROJECTION_THREAD,
    projectionLayout: env.DMS_PROJECTION_LAYOUT,
    projectionThreads: env.DMS_PROJECTION_THREADS ?? availableParallelism(),
    generationGraceMs: env.DMS_GENERATION_GRACE_SECONDS * 1000,
    logWriterThread: env.DMS_LOG_WRITER_THREAD,
    apiWorkers: env.DMS_API_WORKERS ?? availableParallelism(),
    metrics: env.DMS_METRICS,
    metricsPort: env.DMS_METRICS_PORT,
    clientHeaders: env.DMS_CLIENT_HEADERS,
    oidcProviders: oidc.providers,
    rseAccounts: env.DMS_RSE_ACCOUNTS,
    geoipDatabase: env.DMS_GEOIP_DB,
    messagingPassword: env.DMS_MESSAGING_HERMES_PASSWORD,
  };
};
