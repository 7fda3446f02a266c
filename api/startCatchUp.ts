import type { Middleware } from 'koa';
import { ResourceTemporaryUnavailable } from '../domain/shared/errors.ts';
import type { Logger } from '../infra/logger.ts';
import type { ProjectionProgress } from '../projections/runtime/projectionRunner.ts';
import type { AppState } from './services.ts';

/**
 * No stale read after a (re)start. An API process reads the read models, which a projector fills
 * from the event log; after a restart they may be behind what the log already holds: writes
 * acknowledged before a crash (each acknowledged once the read models showed it, but the read
 * models are rebuilt from checkpoints, and a projector that restarts catches up from there), or
 * writes another process made meanwhile. So until the read models have applied the log's head as
 * it stood when this process started, a request waits for them (up to `waitMs`, then 503
 * ResourceTemporaryUnavailable, which Rucio's clients retry), and the process says both in its
 * log: that it waits, and when the read models got there. Liveness (`/ping`) and `/metrics`
 * answer at once.
 *
 * Read through `ProjectionProgress.waitFor`, so it holds however the progress is made: the
 * projection thread, a projector elsewhere (checkpoints and signals), the cluster's relay.
 */
export class StartCatchUp {
  private head: bigint | undefined;
  private reached = false;
  private closed = false;

  constructor(
    private readonly progress: ProjectionProgress,
    private readonly logger: Logger,
    /** How long one request waits at most; 0: requests never wait (read-your-writes off). */
    private readonly waitMs: number,
  ) {}

  /** Whether requests are answered without waiting. */
  get caughtUp(): boolean {
    return this.reached || this.head === undefined || this.waitMs === 0;
  }

  /**
   * Holds requests until the read models reach `head`, the log's head at this process's start,
   * and says so; logs again once they reach it.
   */
  holdUntil(head: bigint): void {
    this.head = head;
    const started = performance.now();
    const watch = async (): Promise<void> => {
      // The usual start: every projection group already shows the head, and nothing need be said.
      if (await this.progress.waitFor(head, 0)) {
        this.reached = true;
        return;
      }
      this.logger.info(
        { head: head.toString() },
        "the read models are behind the event log's head at start: requests wait until they show it",
      );
      while (!(await this.progress.waitFor(head, 60_000))) {
        if (this.closed) return;
        this.logger.warn(
          { head: head.toString(), waitedMs: Math.round(performance.now() - started) },
          "the read models have still not reached the event log's head at start (is a projector running?): requests are answered 503",
        );
      }
      this.reached = true;
      this.logger.info(
        { head: head.toString(), waitedMs: Math.round(performance.now() - started) },
        "the read models reached the event log's head at start: answering requests",
      );
    };
    watch().catch((error: unknown) => this.logger.warn({ err: error }, 'could not follow the read models at start'));
  }

  /** Stops following the read models (the process stops). */
  close(): void {
    this.closed = true;
  }

  middleware(): Middleware<AppState> {
    return async (ctx, next) => {
      if (!this.caughtUp && !isAlwaysAnswered(ctx.path)) await this.wait();
      await next();
    };
  }

  private async wait(): Promise<void> {
    const head = this.head!;
    if (await this.progress.waitFor(head, this.waitMs)) {
      this.reached = true;
      return;
    }
    throw new ResourceTemporaryUnavailable(
      `The read models are catching up with the event log after a start (position ${head}); try again shortly`,
    );
  }
}

const isAlwaysAnswered = (path: string): boolean =>
  path === '/ping' || path === '/ping/' || path === '/metrics' || path.startsWith('/console');
