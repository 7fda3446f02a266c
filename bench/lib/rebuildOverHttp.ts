import { client, expectStatus, type Call } from './httpClient.ts';
import type { ServerProcess } from './serverProcess.ts';
import { cpuSeconds } from './wrk.ts';

type Report = { name: string; head: number; rebuild: { checkpoint: number; error: string | null } | null };

export type RebuildOverHttp = Readonly<{
  /** Projections rebuilt. */
  projections: number;
  /** The log's head when the rebuilds were requested. */
  head: number;
  /** Events replayed from the clock's start (the furthest-behind rebuild's position then) to the head. */
  events: number;
  ms: number;
  /** CPU seconds of the server's processes from the requests to the end. */
  cpuSeconds: number;
}>;

const reportsOf = async (call: Call): Promise<Report[]> => {
  const response = await call('GET', '/admin/projections');
  expectStatus(response, 200, 'projections');
  return JSON.parse(response.text) as Report[];
};

/**
 * Every projection of a running `dms serve` rebuilt the way an operator does it,
 * `POST /admin/projections/{name}/rebuild` for each: the server's projector threads rebuild each
 * group beside its serving generation, in parallel, and switch reads over. The requests go out
 * together, so that each group starts its rebuilds in one lane that reads the log once. The
 * projector looks for requests every second, so the clock starts at the first reading that shows
 * every rebuild under way, and counts the events from the furthest-behind one then.
 */
export const rebuildEveryProjection = async (
  server: ServerProcess,
  token: string,
  timeoutMs = 3_600_000,
): Promise<RebuildOverHttp> => {
  const call = client(server, token, 1);
  const reports = await reportsOf(call);
  const head = reports[0]!.head;
  const cpuBefore = cpuSeconds(server.pid);
  const admin = client(server, token, reports.length);
  const requestedAt = process.hrtime.bigint();
  const requested = await Promise.all(reports.map(({ name }) => admin('POST', `/admin/projections/${name}/rebuild`)));
  for (const response of requested) expectStatus(response, 202, 'rebuild');
  let started = { at: requestedAt, checkpoint: 0 };
  let seenUnderWay = false;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const at = process.hrtime.bigint();
    const now = await reportsOf(call);
    const failed = now.find((report) => report.rebuild?.error);
    if (failed) throw new Error(`the rebuild of ${failed.name} failed: ${failed.rebuild!.error}`);
    const underWay = now.filter((report) => report.rebuild !== null);
    if (!seenUnderWay && underWay.length > 0 && underWay.every((report) => report.rebuild!.checkpoint > 0)) {
      seenUnderWay = true;
      started = { at, checkpoint: Math.min(...underWay.map((report) => report.rebuild!.checkpoint)) };
    }
    if (underWay.length === 0) break;
    if (Date.now() > deadline) throw new Error(`the rebuilds did not finish within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    projections: reports.length,
    head,
    events: head - started.checkpoint,
    ms: Number(process.hrtime.bigint() - started.at) / 1e6,
    cpuSeconds: cpuSeconds(server.pid) - cpuBefore,
  };
};
