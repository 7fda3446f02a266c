import { ftsCredentialsFromEnvironment } from './fts3Client.ts';
import { Fts3TransferTool, ftsServersOf, REFUSED_PREFIX, type Fts3TransferToolOptions } from './fts3TransferTool.ts';
import { bareReport, type JobReport, type SubmittedJob, type TransferJob, type TransferTool } from './transferTool.ts';

export type Fts3ServersOptions = Readonly<{
  /** Servers asked about jobs this process did not submit, and used for jobs that name none (default none). */
  knownServers?: readonly string[];
  /** Options of every server's tool (credentials, timeouts...), all but the URL. */
  toolOptions?: Omit<Fts3TransferToolOptions, 'url'>;
}>;

/**
 * The `fts3` tool as the registry names it: one Fts3TransferTool per FTS server, made on first
 * use. A job goes to the server its attributes name (`fts`, the RSE attribute, first of its
 * list, as Rucio submits to `fts_hosts[0]`; `pickFtsServer` chooses it), else to the first known
 * server; with neither it is refused (FAILED at the next poll).
 *
 * FTS job ids are UUIDs, unique across servers: a poll or cancel goes to the server that took the
 * job when this process submitted it, and otherwise (another process submitted it, or this one
 * restarted) to every known server, the answer of the one that knows the job winning. A caller
 * that kept the request's `externalHost` can skip that search with `forServer(externalHost)`.
 */
/** The placeholder URL of the tool that refuses jobs with no server; it never connects. */
const NO_SERVER = 'http://no-fts-server.invalid';

export class Fts3Servers implements TransferTool {
  readonly name = 'fts3';
  private readonly tools = new Map<string, Fts3TransferTool>();
  /** The server of each job this process placed; forgotten an hour after its first final report. */
  private readonly placed = new Map<string, { server: string; finalAt: number | null }>();

  constructor(private readonly options: Fts3ServersOptions = {}) {}

  /** The tool of one server (the `externalHost` a submission answered). */
  forServer(url: string): Fts3TransferTool {
    const key = url.replace(/\/+$/, '');
    let tool = this.tools.get(key);
    if (!tool) {
      tool = new Fts3TransferTool({ ...this.options.toolOptions, url: key });
      this.tools.set(key, tool);
    }
    return tool;
  }

  async submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]> {
    return this.submitPaths(jobs.map((job) => [job]));
  }

  /** Each path to the server its last copy names (Rucio submits a path to its last hop's servers). */
  async submitPaths(paths: readonly (readonly TransferJob[])[]): Promise<SubmittedJob[]> {
    const byServer = new Map<string, { index: number; path: readonly TransferJob[] }[]>();
    paths.forEach((path, index) => {
      const server = ftsServersOf(path.at(-1)!.attributes.fts)[0] ?? this.options.knownServers?.[0] ?? '';
      byServer.set(server, [...(byServer.get(server) ?? []), { index, path }]);
    });
    const answers: SubmittedJob[][] = new Array(paths.length);
    await Promise.all(
      [...byServer].map(async ([server, batch]) => {
        // Without a server the job is refused by a tool that never connects: its URL is a placeholder.
        const tool = this.forServer(server || NO_SERVER);
        if (!server) {
          for (const { index, path } of batch) answers[index] = refusedWithoutServer(tool, path);
          return;
        }
        const submitted = await tool.submitPaths(batch.map(({ path }) => path));
        let next = 0;
        for (const { index, path } of batch) {
          answers[index] = submitted.slice(next, next + path.length);
          next += path.length;
          for (const answer of answers[index])
            this.placed.set(answer.externalId, { server: tool.externalHost, finalAt: null });
        }
      }),
    );
    return answers.flat();
  }

  async poll(externalIds: readonly string[]): Promise<Map<string, JobReport>> {
    const found = new Map<string, JobReport>();
    const unplaced: string[] = [];
    const byServer = new Map<string, string[]>();
    for (const externalId of new Set(externalIds)) {
      const server =
        this.placed.get(externalId)?.server ?? (externalId.startsWith(REFUSED_PREFIX) ? NO_SERVER : undefined);
      if (server) byServer.set(server, [...(byServer.get(server) ?? []), externalId]);
      else unplaced.push(externalId);
    }
    for (const [server, ids] of byServer)
      for (const [id, report] of await this.forServer(server).poll(ids)) found.set(id, report);
    for (const server of unplaced.length > 0 ? (this.options.knownServers ?? []) : []) {
      const stillLost = unplaced.filter((id) => (found.get(id)?.state ?? 'LOST') === 'LOST');
      if (stillLost.length === 0) break;
      for (const [id, report] of await this.forServer(server).poll(stillLost)) {
        found.set(id, report);
        if (report.state !== 'LOST')
          this.placed.set(id, { server: this.forServer(server).externalHost, finalAt: null });
      }
    }
    this.forgetFinished(found);
    const reports = new Map<string, JobReport>();
    for (const externalId of externalIds) {
      reports.set(
        externalId,
        found.get(externalId) ?? bareReport(externalId, 'LOST', 'No known FTS server knows this job'),
      );
    }
    return reports;
  }

  async cancel(externalIds: readonly string[]): Promise<void> {
    for (const externalId of externalIds) {
      const server = this.placed.get(externalId)?.server;
      const servers = server
        ? [server]
        : externalId.startsWith(REFUSED_PREFIX)
          ? []
          : (this.options.knownServers ?? []);
      for (const url of servers) await this.forServer(url).cancel([externalId]);
    }
  }

  /** A job's server is kept an hour after its end was first reported, in case the poller asks again. */
  private forgetFinished(reports: ReadonlyMap<string, JobReport>): void {
    const now = Date.now();
    for (const [externalId, report] of reports) {
      const placed = this.placed.get(externalId);
      if (placed && placed.finalAt === null && report.state !== 'SUBMITTED') placed.finalAt = now;
    }
    for (const [externalId, placed] of this.placed)
      if (placed.finalAt !== null && now - placed.finalAt > 3_600_000) this.placed.delete(externalId);
  }

  async close(): Promise<void> {
    const tools = [...this.tools.values()];
    this.tools.clear();
    await Promise.all(tools.map((tool) => tool.close()));
  }
}

const refusedWithoutServer = (tool: Fts3TransferTool, path: readonly TransferJob[]): SubmittedJob[] => {
  const externalId = tool.refuseUnsent(
    'No FTS server for this transfer: the RSEs have no fts attribute and no server is configured',
  );
  return path.map((job) => ({ requestId: job.requestId, externalId, externalHost: tool.externalHost }));
};

/**
 * The registry's `fts3` tool from the environment: `DMS_FTS_SERVERS` (comma-separated, the
 * servers asked about jobs of other processes and used for RSEs without an `fts` attribute) and
 * the client certificate of `ftsCredentialsFromEnvironment`.
 */
export const fts3ServersFromEnvironment = (environment: NodeJS.ProcessEnv = process.env): Fts3Servers =>
  new Fts3Servers({
    knownServers: ftsServersOf(environment.DMS_FTS_SERVERS),
    toolOptions: { credentials: ftsCredentialsFromEnvironment(environment) },
  });
