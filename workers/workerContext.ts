import type { CommandContext } from '../commands/commandContext.ts';
import type { ConfigSections } from '../domain/config/settings.ts';
import type { Clock } from '../infra/clock.ts';
import type { Logger } from '../infra/logger.ts';
import { BrokerConnections } from '../infra/messaging/brokerConnections.ts';
import { createStorages, type Storages } from '../infra/storage/storages.ts';
import { ServiceTokens } from '../infra/security/clientCredentialsTokens.ts';
import type { TransferTools } from '../infra/transfer/transferTools.ts';
import { configSections } from '../projections/config/configQueries.ts';
import type { ProjectionProgress } from '../projections/runtime/projectionRunner.ts';
import type { ReadModels } from '../projections/runtime/readModels.ts';

/**
 * What a daemon role works with: the command layer (the only way it changes anything), the read
 * models for the facts its workflow needs, the configuration, the transfer tools, hermes's broker connection, this service's own tokens, and a logger. Built once per process
 * by bin/runtime.ts; workers never see the HTTP layer.
 */
export type WorkerContext = Readonly<{
  commands: CommandContext;
  readModels: ReadModels;
  logger: Logger;
  /** The transfer tools by name (the conveyor's submitter, poller and canceller talk to them). */
  transferTools: TransferTools;
  /** The storages the deletion daemons delete on, by the RSE's delete protocol. */
  storages: Storages;
  /** Hermes's connection to its message broker, kept between cycles, and the broker password. */
  messaging: Messaging;
  /** Tokens of this service's own from the trusted OpenID providers (the transfers of RSEs with `oidc_support`). */
  serviceTokens: ServiceTokens;
  /**
   * What the roles decide by time: when a job starts (its commands' time, the workflows' `now`),
   * the time of each step of a long job, exclusions and delays (infra/clock.ts).
   */
  clock: Clock;
  /** The configuration (`/config`) as the read models show it now. */
  settings(): Promise<ConfigSections>;
  /**
   * Waits until the read models show everything up to `position` (an event role reading facts
   * about the graph its event changed); false when they did not within the bound.
   */
  readModelsAt(position: bigint): Promise<boolean>;
}>;

export type Messaging = Readonly<{ brokers: BrokerConnections; password: string | undefined }>;

/** How long an event role waits for the read models to reach its event before reading facts anyway. */
const READ_MODEL_WAIT_MS = 30_000;

export const createWorkerContext = (
  commands: CommandContext,
  readModels: ReadModels,
  progress: Pick<ProjectionProgress, 'waitFor'>,
  logger: Logger,
  transferTools: TransferTools,
  /**
   * The clock the roles decide by; the storages (default: every kind, made on first use),
   * hermes's messaging (default: connections of its own, no password) and the service's tokens
   * (default: no trusted provider).
   */
  options: Readonly<{ clock: Clock; storages?: Storages; messaging?: Messaging; serviceTokens?: ServiceTokens }>,
): WorkerContext => ({
  commands,
  readModels,
  logger,
  transferTools,
  storages: options.storages ?? createStorages(),
  messaging: options.messaging ?? { brokers: new BrokerConnections(), password: undefined },
  serviceTokens: options.serviceTokens ?? new ServiceTokens([]),
  clock: options.clock,
  settings: () => configSections(readModels),
  readModelsAt: (position) => progress.waitFor(position, READ_MODEL_WAIT_MS),
});
