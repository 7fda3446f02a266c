import type { ParameterizedContext } from 'koa';
import type { CommandContext } from '../commands/handleCommand.ts';
import type { IdentityType } from '../domain/identity/identity.ts';
import type { Clock } from '../infra/clock.ts';
import type { ServiceConfig } from '../infra/config.ts';
import type { GeoLocator } from '../infra/geoLocator.ts';
import type { UrlSigner } from '../infra/storage/urlSigner.ts';
import type { Logger } from '../infra/logger.ts';
import type { ProjectionProgress } from '../projections/runtime/projectionRunner.ts';
import type { ReadModels } from '../projections/runtime/readModels.ts';
import type { Oidc } from './auth/oidc/oidc.ts';
import type { TokenStore } from './auth/tokenStore.ts';
import type { ServiceMetrics } from './metrics/serviceMetrics.ts';

/** Everything a route needs, built once at start-up (bin/serve.ts) and in tests. */
export type Services = Readonly<{
  config: ServiceConfig;
  logger: Logger;
  /** What the routes decide by time: requests' command metadata, expiries, throttles (infra/clock.ts). */
  clock: Clock;
  commands: CommandContext;
  readModels: ReadModels;
  progress: ProjectionProgress;
  tokens: TokenStore;
  /** OpenID Connect: trusted providers, JWTs as tokens, the login flow (api/auth/oidc/). */
  oidc: Oidc;
  /** This process's metrics (`GET /metrics`). */
  metrics: ServiceMetrics;
  /** Signs storage URLs with the keys of DMS_RSE_ACCOUNTS (`/credentials/signurl`, signed listings). */
  urlSigner: UrlSigner;
  /** Locates client addresses with DMS_GEOIP_DB (`geoip` replica sorting). */
  geoLocator: GeoLocator;
  /**
   * The daemon roles' queues and last cycles (`GET /admin/daemons`), read from the deployment's
   * Redis by the runtime (bin/runtime.ts); undefined when this process knows no Redis to ask.
   */
  daemons?: () => Promise<readonly DaemonRoleStatus[] | undefined>;
}>;

/** One daemon role as `dms workers status` shows it (workers/daemonStatus.ts makes it). */
export type DaemonRoleStatus = Readonly<{
  role: string;
  kind: 'event' | 'scheduled';
  trigger: string;
  counts: Readonly<Record<string, number>>;
  lastCycle: Readonly<{
    jobId: string;
    startedAt: string;
    durationMs: number;
    done: number;
    skipped: number;
    skippedSample: readonly Readonly<{ what: string; reason: string }>[];
    detail?: string;
    error: string | null;
  }> | null;
  nextRunAt: string | null;
}>;

export type AppState = {
  requestId: string;
  logger: Logger;
  /**
   * The request's trace id (W3C, 32 hex digits): its `traceparent`'s, or made for it. Every event
   * its commands append carries it as `correlationId` (infra/tracing.ts).
   */
  traceId: string;
  /** The authenticated account (Rucio's "issuer"), set by the token check. */
  issuer?: string;
  /** The identity the token was issued to (a user name, a DN, an SSH key...), and its type. */
  identity?: string;
  identityType?: IdentityType;
  /** The header names this server reads and writes (DMS_CLIENT_HEADERS, api/clientHeaders.ts). */
  clientHeaders?: 'svc' | 'rucio';
  /** Statuses this route gives some exception classes instead of the defaults. */
  errorStatus?: Readonly<Record<string, number>>;
  /** The request's body as text, read and bounded before routing (api/app.ts); absent when it has none. */
  body?: string;
};

/** What @koa/router reads and writes on Koa's context besides Koa's own fields. */
declare module 'koa' {
  interface DefaultContext {
    /** The path the router matches: set to the decoded path before routing (api/app.ts). */
    newRouterPath?: string;
    /** The pattern of the route that matched (`/dids/*scope_name/dids`), set by the router. */
    routerPath?: string;
  }
}

export type AppContext = ParameterizedContext<AppState> & { params: Record<string, string> };
