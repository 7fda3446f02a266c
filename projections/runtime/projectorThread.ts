import type { Worker } from 'node:worker_threads';
import type { ServiceConfig } from '../../infra/config.ts';
import { entryModule, startThread } from '../../infra/moduleFiles.ts';
import type { Logger } from '../../infra/logger.ts';
import { PositionWaiters } from './positionWaiters.ts';
import type { ProgressReport } from './progressRelay.ts';
import type { ProjectionProgress } from './projectionRunner.ts';
import type { ReadModels } from './readModels.ts';

export type ProjectorThreadMessage = ProgressReport;

const THREAD_ENTRY = entryModule(import.meta.url, './projectorThreadMain.ts', 'projectorThread');

/** First and longest pause before a projection thread that died is started again. */
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** A thread that ran this long before dying is restarted after the first pause again. */
const STABLE_AFTER_MS = 60_000;

/**
 * `dms serve`'s projections on a worker thread, so that deciding and answering requests and
 * applying events to the read models use two cores instead of taking turns on one. The thread
 * opens its own connections to the stores (as a `dms projector` process would) and reports the
 * position it has applied after every batch: read-your-writes waits on those reports, without
 * polling. A switch of generation after a rebuild is reported too, so reads follow at once. A
 * thread that dies is logged and started again, with growing pauses; waiting writes time out
 * meanwhile, as they would with a stopped projector.
 */
export class ProjectorThread implements ProjectionProgress {
  private worker: Worker | undefined;
  private position = 0n;
  private readonly waiters = new PositionWaiters();
  private stopping = false;
  private restartDelayMs = FIRST_RESTART_DELAY_MS;
  private readyAt = 0;
  private readonly listeners = new Set<(report: ProgressReport) => void>();

  private constructor(
    private readonly config: ServiceConfig,
    private readonly readModels: ReadModels,
    private readonly logger: Logger,
    private readonly entry: URL,
  ) {}

  /**
   * Starts the thread; resolves once its projections run (caught up or catching up). `entry`
   * names the thread's module; tests wrap the real one to make the thread die.
   */
  static async start(
    config: ServiceConfig,
    readModels: ReadModels,
    logger: Logger,
    entry: URL = THREAD_ENTRY,
  ): Promise<ProjectorThread> {
    const thread = new ProjectorThread(config, readModels, logger, entry);
    await thread.spawn();
    return thread;
  }

  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.waiters.wait(position, this.position, timeoutMs);
  }

  appliedPosition(): bigint {
    return this.position;
  }

  /**
   * Hands every report of the thread to `listener` once this process has taken it in (the API
   * workers of `dms serve` hear of them through the cluster primary); returns what stops it.
   */
  onReport(listener: (report: ProgressReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Asks the thread to finish its batch and close its stores; resolves once it has exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (worker) {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'stop' });
      await exited;
    }
    this.waiters.close();
  }

  private spawn(): Promise<void> {
    const worker = startThread(this.entry, { workerData: { config: this.config } });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: ProjectorThreadMessage) => {
        if (message.type === 'ready') {
          for (const [name, generation] of Object.entries(message.generations))
            this.readModels.setServingGeneration(name, generation);
          ready = true;
          this.readyAt = Date.now();
          this.advance(message.position);
          resolve();
        } else if (message.type === 'progress') {
          this.advance(message.position);
        } else if (message.type === 'generation') {
          this.readModels.setServingGeneration(message.name, message.generation);
        }
        for (const listener of [...this.listeners]) listener(message);
      });
      let failure: Error | undefined;
      worker.on('error', (error) => {
        failure = error;
        if (ready) this.logger.error({ err: error }, 'the projection thread failed');
      });
      // A thread that fails before it is ready is reported once it has exited, so that nothing of it is left.
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (!ready) reject(failure ?? new Error(`the projection thread exited with code ${code} before it was ready`));
        else if (!this.stopping) {
          // Pauses grow while the thread keeps dying soon after starting, not once it has run a while.
          if (Date.now() - this.readyAt >= STABLE_AFTER_MS) this.restartDelayMs = FIRST_RESTART_DELAY_MS;
          this.restartLater(code);
        }
      });
    });
  }

  private restartLater(code: number): void {
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, MAX_RESTART_DELAY_MS);
    this.logger.error({ code, restartInMs: delay }, 'the projection thread stopped; starting it again');
    setTimeout(() => {
      if (this.stopping) return;
      this.spawn().catch((error: unknown) => {
        this.logger.error({ err: error }, 'the projection thread could not start');
        if (!this.stopping) this.restartLater(1);
      });
    }, delay).unref();
  }

  private advance(position: bigint): void {
    if (position > this.position) this.position = position;
    this.waiters.advance(this.position);
  }
}
