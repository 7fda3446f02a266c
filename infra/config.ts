import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { readRseAccounts, RseAccountsInvalid } from './security/rseAccounts.ts';

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
  /** `sqlite` (files under DMS_DATA_DIR) or an EventStoreDB connection string `esdb://...`. */
  DMS_EVENT_STORE: z
    .string()
    .default('sqlite')
    .refine(
      (value) => value === 'sqlite' || /^esdb(\+discover)?:\/\//.test(value),
      'expected sqlite or an esdb:// URL',
    ),
  /** `sqlite` (files under DMS_DATA_DIR) or a MongoDB connection string `mongodb://...`. */
  DMS_READ_STORE: z
    .string()
    .default('sqlite')
    .refine(
      (value) => value === 'sqlite' || /^mongodb(\+srv)?:\/\//.test(value),
      'expected sqlite or a mongodb:// URL',
    ),
  /**
   * An existing Redis; without it the service starts a private redis-server from the PATH.
   * Required with an EventStoreDB event store (the leases of multi-stream appends live there).
   */
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
  /** How long a write waits for the read models to show it before answering anyway. */
  DMS_READ_YOUR_WRITES_TIMEOUT_MS: integerText(0, 600_000).default(5000),
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  DMS_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
  /** Start the background workers in `dms serve`; off for API-only processes. */
  DMS_WORKERS: booleanText.default(true),
  /** `dms serve` runs the projections on a thread of their own (a second core); false: on the API's thread. */
  DMS_PROJECTION_THREAD: booleanText.default(true),
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
  readStore: { kind: 'sqlite' } | { kind: 'mongodb'; url: string };
  redisUrl: string | undefined;
  queuePrefix: string;
  tokenLifetimeSeconds: number;
  readYourWritesTimeoutMs: number;
  logLevel: string;
  x509DnHeader: string | undefined;
  gssRemoteUserHeader: string | undefined;
  trustProxy: boolean;
  maxBodyBytes: number;
  workers: boolean;
  projectionThread: boolean;
  metrics: 'loopback' | 'open' | 'off';
  metricsPort: number | undefined;
  /** `svc`: X-Svc-* headers only; `rucio`: X-Rucio-* ones too (DMS_CLIENT_HEADERS). */
  clientHeaders: 'svc' | 'rucio';
  /** The RSE accounts file signed URLs are made with (DMS_RSE_ACCOUNTS), if any. */
  rseAccounts: string | undefined;
  /** The MaxMind database `geoip` sorting locates clients with (DMS_GEOIP_DB), if any. */
  geoipDatabase: string | undefined;
}>;

export class ConfigurationInvalidError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
    this.name = 'ConfigurationInvalidError';
  }
}

export const REDIS_URL_REQUIRED =
  'REDIS_URL=undefined: required when DMS_EVENT_STORE is an EventStoreDB URL (multi-stream appends take leases in the Redis all processes share)';

/** Reads and validates the environment; throws ConfigurationInvalidError naming each bad variable. */
export const loadConfig = (environment: NodeJS.ProcessEnv = process.env): ServiceConfig => {
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
  if (env.DMS_EVENT_STORE !== 'sqlite' && env.REDIS_URL === undefined) {
    // Without a shared Redis, processes writing to EventStoreDB could interleave their multi-stream
    // appends (see infra/eventstore/steppedEventStore.ts); a private redis-server is no help there.
    throw new ConfigurationInvalidError([REDIS_URL_REQUIRED]);
  }
  return {
    port: env.PORT,
    host: env.DMS_HOST,
    dataDir: resolve(env.DMS_DATA_DIR),
    rootUsername: env.DMS_ROOT_USERNAME,
    rootPassword: env.DMS_ROOT_PASSWORD,
    rootEmail: env.DMS_ROOT_EMAIL,
    rootPasswordIsDefault: environment.DMS_ROOT_PASSWORD === undefined,
    eventStore: env.DMS_EVENT_STORE === 'sqlite' ? { kind: 'sqlite' } : { kind: 'esdb', url: env.DMS_EVENT_STORE },
    readStore: env.DMS_READ_STORE === 'sqlite' ? { kind: 'sqlite' } : { kind: 'mongodb', url: env.DMS_READ_STORE },
    redisUrl: env.REDIS_URL,
    queuePrefix: env.DMS_QUEUE_PREFIX,
    tokenLifetimeSeconds: env.DMS_TOKEN_LIFETIME_SECONDS,
    readYourWritesTimeoutMs: env.DMS_READ_YOUR_WRITES_TIMEOUT_MS,
    logLevel: env.DMS_LOG_LEVEL,
    x509DnHeader: env.DMS_X509_DN_HEADER,
    gssRemoteUserHeader: env.DMS_GSS_REMOTE_USER_HEADER,
    trustProxy: env.DMS_TRUST_PROXY,
    maxBodyBytes: env.DMS_MAX_BODY_BYTES,
    workers: env.DMS_WORKERS,
    projectionThread: env.DMS_PROJECTION_THREAD,
    metrics: env.DMS_METRICS,
    metricsPort: env.DMS_METRICS_PORT,
    clientHeaders: env.DMS_CLIENT_HEADERS,
    rseAccounts: env.DMS_RSE_ACCOUNTS,
    geoipDatabase: env.DMS_GEOIP_DB,
  };
};
