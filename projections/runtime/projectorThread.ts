import type { Worker } from 'node:worker_threads';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { entryModule, startThread } from '../../infra/moduleFiles.ts';
import type { Logger } from '../../infra/logger.ts';
import type { ProgressReport } from './progressRelay.ts';
import type { GroupHost } from './runningProjections.ts';

export type ProjectorThreadMessage = ProgressReport;

const THREAD_ENTRY = entryModule(import.meta.url, './projectorThreadMain.ts', 'projectorThread');

/** First and longest pause before a projection thread that died is started again. */
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** A thread that ran this long before dying is restarted after the first pause again. */
const STABLE_AFTER_MS = 60_000;

/**
 * Projection groups on a worker thread (projectorThreadMain.ts): by default one group per
 * thread, so that the groups write their read models in parallel and beside the API, each on a
 * core (DMS_PROJECTION_THREADS puts several on one). The thread opens its own connections to the
 * stores (as a `dms projector` process would) and reports the position each group has applied
 * after every batch, and every switch of generation: the process's read-your-writes waits on
 * those reports, without polling (runningProjections.ts). A thread that dies is logged and
 * started again, with growing pauses; writes waiting for its groups time out meanwhile, as they
 * would with a stopped projector.
 */
export class ProjectorThread implements GroupHost {
  private worker: Worker | undefined;
  private stopping = false;
  private restartDelayMs = FIRST_RESTART_DELAY_MS;
  private readyAt = 0;

  private constructor(
    private readonly config: ServiceConfig,
    readonly groups: readonly string[],
    private readonly onReport: (report: ProgressReport) => void,
    private readonly logger: Logger,
    private readonly entry: URL,
  ) {}

  /**
   * Starts the thread of `groups`; resolves once their projections run (caught up or catching
   * up), after its first report. `entry` names the thread's module; tests wrap the real one to
   * make the thread die.
   */
  static async start(
    config: ServiceConfig,
    groups: readonly string[],
    onReport: (report: ProgressReport) => void,
    logger: Logger,
    entry: URL = THREAD_ENTRY,
  ): Promise<ProjectorThread> {
    const thread = new ProjectorThread(config, groups, onReport, logger.child({ groups }), entry);
    await thread.spawn();
    return thread;
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
  }

  private spawn(): Promise<void> {
    const worker = startThread(this.entry, { workerData: { config: this.config, groups: this.groups } });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: ProjectorThreadMessage) => {
        if (message.type === 'ready') {
          ready = true;
          this.readyAt = Date.now();
          this.onReport(message);
          resolve();
          return;
        }
        this.onReport(message);
      });
      let failure: Error | undefined;
      worker.on('error', (error) => {
        failure = error;
        if (ready) this.logger.error({ err: error }, 'a projection thread failed');
      });
      // A thread that fails before it is ready is reported once it has exited, so that nothing of it is left.
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (!ready)
          reject(
            failure ??
              new Error(
                `the projection thread of ${this.groups.join(', ')} exited with code ${code} before it was ready`,
              ),
          );
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
    this.logger.error({ code, restartInMs: delay }, 'a projection thread stopped; starting it again');
    setTimeout(() => {
      if (this.stopping) return;
      this.spawn().catch((error: unknown) => {
        this.logger.error({ err: error }, 'a projection thread could not start');
        if (!this.stopping) this.restartLater(1);
      });
    }, delay).unref();
  }
}
