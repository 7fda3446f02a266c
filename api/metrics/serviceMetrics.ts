import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProjectionReport } from '../../projections/runtime/projectionStatus.ts';
import { loginCounts } from '../auth/loginStats.ts';

/** Seconds: from a fast read (1 ms) to a bulk registration or a long listing (30 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A scrape reads the stores once for all the gauges that need them, not once per gauge. */
const SCRAPE_MEMO_MS = 1000;

/** One process's metrics as data (prom-client's `getMetricsAsJSON`): plain values, fit to send to another process. */
export type ProcessMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export type AppendOutcome = 'appended' | 'conflict' | 'failed';
export type JobOutcome = 'completed' | 'failed';
export type QueueDepth = Readonly<{ queue: string; counts: Readonly<Record<string, number>> }>;

/**
 * What the whole process measures once whatever runs in it: CPU, memory, event loop delay,
 * garbage collection (prom-client's default metrics), and logins (api/auth/loginStats.ts counts
 * them per process). Registered on first use, never twice: tests start many services in one
 * process, and each default-metrics registration would add a GC observer for good.
 */
let processRegistry: Registry | undefined;
const processMetrics = (): Registry => {
  if (processRegistry) return processRegistry;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Counter({
    name: 'dms_logins_total',
    help: 'Login attempts by method (userpass, x509, gss) and outcome (succeeded, failed, delayed and refused by the throttle).',
    labelNames: ['method', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { method, outcome, count } of loginCounts()) this.inc({ method, outcome }, count);
    },
  });
  processRegistry = registry;
  return registry;
};

/**
 * One process's metrics in Prometheus's text format (`GET /metrics`, or the port of
 * DMS_METRICS_PORT): every process serves its own, and Prometheus tells them apart by target.
 * Counters and histograms are fed as things happen (requests, appends, jobs); the projections'
 * lag and the queues' depths are read from the stores when scraped, through the sources
 * `watchProjections` and `watchQueues` were given (none: those metrics are absent).
 */
export class ServiceMetrics {
  private readonly registry = new Registry();
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly appends: Counter<'outcome'>;
  private readonly appendedEvents: Counter;
  private readonly appendDuration: Histogram<'outcome'>;
  private readonly jobs: Counter<'queue' | 'outcome'>;
  private readonly jobDuration: Histogram<'queue'>;

  constructor(private readonly onScrapeError: (what: string, error: unknown) => void = () => undefined) {
    const registers = [this.registry];
    this.requestDuration = new Histogram({
      name: 'dms_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern (unmatched: "(none)") and status, until the answer was sent; _count counts them.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.appends = new Counter({
      name: 'dms_event_appends_total',
      help: 'Appends to the event store (one per decision, of one or several streams) by outcome: appended, conflict (a concurrent write; the command decides again), failed.',
      labelNames: ['outcome'],
      registers,
    });
    this.appendedEvents = new Counter({
      name: 'dms_events_appended_total',
      help: 'Events written by successful appends.',
      registers,
    });
    this.appendDuration = new Histogram({
      name: 'dms_event_append_duration_seconds',
      help: 'Time an append took, durable commit included, by outcome.',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.jobs = new Counter({
      name: 'dms_jobs_total',
      help: 'Daemon jobs this process ran, by queue (the role) and outcome (completed, failed: BullMQ retries failed jobs).',
      labelNames: ['queue', 'outcome'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'dms_job_duration_seconds',
      help: 'Time a daemon job took, by queue.',
      labelNames: ['queue'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The histogram's series of each method, route and status seen, so a request skips hashing its labels. */
  private readonly requestSeries = new Map<string, { observe(seconds: number): void }>();

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      series = this.requestDuration.labels({ method, route, status: String(status) });
      this.requestSeries.set(key, series);
    }
    series.observe(seconds);
  }

  observeAppend(outcome: AppendOutcome, events: number, seconds: number): void {
    this.appends.inc({ outcome });
    if (outcome === 'appended') this.appendedEvents.inc(events);
    this.appendDuration.observe({ outcome }, seconds);
  }

  observeJob(queue: string, outcome: JobOutcome, seconds: number): void {
    this.jobs.inc({ queue, outcome });
    this.jobDuration.observe({ queue }, seconds);
  }

  /**
   * Per projection, read when scraped (from the stored checkpoints, as `dms projections status`
   * reads them): its lag behind the head of the event log, its checkpoint, whether it failed,
   * and how far a rebuild has come.
   */
  watchProjections(reports: () => Promise<readonly ProjectionReport[]>): void {
    const current = memo(reports);
    const registers = [this.registry];
    const read = async (): Promise<readonly ProjectionReport[]> => {
      try {
        return await current();
      } catch (error) {
        this.onScrapeError('projections', error);
        return [];
      }
    };
    new Gauge({
      name: 'dms_event_store_head_position',
      help: 'Position of the newest event in the event log.',
      registers,
      async collect() {
        const [first] = await read();
        if (first) this.set(Number(first.head));
      },
    });
    const perProjection = (name: string, help: string, value: (report: ProjectionReport) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['projection'],
        registers,
        async collect() {
          this.reset();
          for (const report of await read()) {
            const measured = value(report);
            if (measured !== undefined) this.set({ projection: report.name }, measured);
          }
        },
      });
    perProjection(
      'dms_projection_lag_events',
      'Events of the log the serving generation of the projection has not applied yet (head minus checkpoint).',
      (report) => Number(report.lag),
    );
    perProjection(
      'dms_projection_checkpoint',
      'Position of the last event the serving generation of the projection applied.',
      (report) => Number(report.checkpoint),
    );
    perProjection(
      'dms_projection_failed',
      '1 when the projection was set aside after failing on a batch (see dms projections status), else 0.',
      (report) => (report.status === 'failed' ? 1 : 0),
    );
    perProjection(
      'dms_projection_rebuild_progress_ratio',
      'How far a rebuild of the projection has come through the log, 0 to 1; absent when none runs.',
      (report) => report.rebuild?.progress,
    );
  }

  /**
   * In a process whose projections run elsewhere (`dms api`, `dms worker`): how its waits for the
   * read models ended, counted as they end and read when scraped.
   */
  watchReadYourWrites(outcomes: () => Readonly<Record<'signal' | 'checkpoints' | 'timeout', number>>): void {
    new Counter({
      name: 'dms_read_your_writes_waits_total',
      help: 'Waits for the projector by how they ended: signal (its announcement over Redis), checkpoints (seen in the stored checkpoints: the announcement was lost, late, or there is no Redis), timeout (the read models lagged; the write answered anyway).',
      labelNames: ['ended_by'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [endedBy, count] of Object.entries(outcomes())) this.inc({ ended_by: endedBy }, count);
      },
    });
  }

  /** The position signals this process sent and heard over Redis (a split deployment), read when scraped. */
  watchPositionSignals(counts: () => readonly Readonly<{ signal: string; event: string; count: number }>[]): void {
    new Counter({
      name: 'dms_position_signals_total',
      help: "Position signals over Redis by signal (appended: events written; applied:<group>: a projection group's progress) and event (published, dropped: Redis unreachable, received).",
      labelNames: ['signal', 'event'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { signal, event, count } of counts()) this.inc({ signal, event }, count);
      },
    });
  }

  /**
   * The SQLite event log's commits in this process (the one that writes it), read when scraped:
   * with appends arriving together sharing a commit, appends over commits is the group size.
   */
  watchCommits(stats: () => Readonly<{ commits: number; appends: number; seconds: number }>): void {
    const registers = [this.registry];
    new Counter({
      name: 'dms_event_log_commits_total',
      help: 'Transactions the SQLite event log committed, each with one fsync; appends arriving together share one (group commit).',
      registers,
      collect() {
        this.reset();
        this.inc(stats().commits);
      },
    });
    new Counter({
      name: 'dms_event_log_committed_appends_total',
      help: 'Appends (one per decision) the commits of dms_event_log_commits_total held, whatever their outcome.',
      registers,
      collect() {
        this.reset();
        this.inc(stats().appends);
      },
    });
    new Counter({
      name: 'dms_event_log_commit_seconds_total',
      help: 'Time spent committing, fsync included (over dms_event_log_commits_total: the time of one commit).',
      registers,
      collect() {
        this.reset();
        this.inc(stats().seconds);
      },
    });
  }

  /** Per queue of this process's daemon roles, read when scraped: jobs by state (waiting, active, delayed, failed, ...). */
  watchQueues(depths: () => Promise<readonly QueueDepth[]>): void {
    const onScrapeError = this.onScrapeError;
    new Gauge({
      name: 'dms_queue_jobs',
      help: 'Jobs in the BullMQ queue of each daemon role of this process, by state.',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const { queue, counts } of await depths())
            for (const [state, count] of Object.entries(counts)) this.set({ queue, state }, count);
        } catch (error) {
          onScrapeError('queues', error);
        }
      },
    });
  }

  /**
   * What `text` serves, when the process is one of several serving together (the cluster of
   * `dms serve`): their metrics summed (bin/cluster/). Default: this process's own.
   */
  private gathered: (() => Promise<string>) | undefined;

  gatherWith(gather: () => Promise<string>): void {
    this.gathered = gather;
  }

  /** The metrics served: this process's and this service's, or the cluster's, in Prometheus's text format. */
  async text(): Promise<string> {
    if (this.gathered) return this.gathered();
    return this.ownText();
  }

  async ownText(): Promise<string> {
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return own + process;
  }

  /** This process's metrics as data, to be summed with other processes' (`aggregate`). */
  async json(): Promise<ProcessMetrics> {
    const [own, process] = await Promise.all([this.registry.getMetricsAsJSON(), processMetrics().getMetricsAsJSON()]);
    return [...own, ...process];
  }
}

/**
 * The metrics of several processes as one (prom-client's cluster aggregation): counters and
 * histograms summed, gauges summed unless declared otherwise (the event loop's lag is averaged,
 * a process's start time the earliest).
 */
export const aggregateMetrics = (processes: readonly (readonly object[])[]): Promise<string> =>
  AggregatorRegistry.aggregate(processes.map((metrics) => [...metrics])).metrics();

/** The same promise for calls within SCRAPE_MEMO_MS of the first: one store read per scrape. */
const memo = <T>(read: () => Promise<T>): (() => Promise<T>) => {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > SCRAPE_MEMO_MS) last = { at: now, value: read() };
    return last.value;
  };
};
