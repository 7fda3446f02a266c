import type { Worker } from 'node:worker_threads';
import { entryModule, startThread } from '../moduleFiles.ts';
import { isRecord } from '../narrowing.ts';
import type { StreamAppend } from './eventStore.ts';
import { errorOfAppendFailure, parseAppendFailure, parseAppendResults } from './forwardedAppends.ts';
import type { GroupOutcome } from './sqliteLogWriter.ts';

/** A group's outcomes, and the writer's transaction that held it (groups sent together share one). */
export type Committed = { outcomes: GroupOutcome[]; transaction: number; seconds: number };

type Waiting = { resolve(answer: Committed): void; reject(error: Error): void };

/**
 * The SQLite log's writer on a thread of its own (sqliteWriterThreadMain.ts): a group commit's
 * transaction and fsync (5 ms and more on a shared disk) no longer stop the event loop of the
 * process that writes the log, which meanwhile reads requests, decides commands and relays the
 * projections' progress. Groups are sent as they come; the thread commits every group that
 * arrived during its last commit in one transaction and one fsync, and answers each once it is
 * on disk.
 */
export class SqliteWriterThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private readonly exited: Promise<void>;
  private nextId = 1;
  private failure: Error | undefined;

  constructor(path: string, options: { autocheckpointPages?: number } = {}) {
    this.worker = startThread(entryModule(import.meta.url, './sqliteWriterThreadMain.ts', 'logWriterThread'), {
      workerData: {
        path,
        ...(options.autocheckpointPages ? { autocheckpointPages: options.autocheckpointPages } : {}),
      },
    });
    this.worker.on('message', (message: unknown) => this.answer(message));
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise<void>((resolve) =>
      this.worker.once('exit', () => {
        this.fail(new Error('The event log writer thread exited'));
        resolve();
      }),
    );
    // Kept alive only while a commit is under way (commit() refs it): an idle writer does not
    // hold the process open.
    this.worker.unref();
  }

  /** Commits a group (each caller's appends), resolving once it is on disk. */
  commit(group: readonly (readonly StreamAppend[])[]): Promise<Committed> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, group });
    });
  }

  /** Stops the thread once the commits sent are answered; resolves when its connection is closed. */
  async stop(): Promise<void> {
    if (this.failure) return;
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }

  private answer(message: unknown): void {
    if (!isRecord(message) || typeof message.id !== 'number') return;
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (typeof message.failed === 'string') {
      waiting.reject(new Error(`The event log could not commit: ${message.failed}`));
      return;
    }
    const outcomes: GroupOutcome[] = [];
    for (const item of Array.isArray(message.outcomes) ? message.outcomes : []) {
      const results = isRecord(item) ? parseAppendResults(item.results) : undefined;
      const failure = isRecord(item) ? parseAppendFailure(item.failure) : undefined;
      if (results) outcomes.push({ results });
      else if (failure) outcomes.push({ error: errorOfAppendFailure(failure) });
      else outcomes.push({ error: new Error('The event log writer answered something else') });
    }
    waiting.resolve({
      outcomes,
      transaction: typeof message.transaction === 'number' ? message.transaction : 0,
      seconds: typeof message.seconds === 'number' ? message.seconds : 0,
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
