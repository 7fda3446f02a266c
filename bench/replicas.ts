import { request } from 'node:http';
import { rawBaselineRate } from './appendRates.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startDms, startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { withProjectionRunner } from './lib/projectionRunner.ts';
import { client as httpClient, expectStatus, login, type Call } from './lib/httpClient.ts';

/** BENCH_DATASETS overrides the number of 1000-file datasets (default 100), for a quick run. */
const DATASETS = Number(process.env.BENCH_DATASETS ?? 100);
const FILES_PER_DATASET = 1000;
const FILES = DATASETS * FILES_PER_DATASET;
/** Registration calls in flight at once; BENCH_CONCURRENCY overrides (default 4). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SCOPE = 'bench';
const RSE = 'BENCH_DISK';

/** Scope, RSE with a protocol, one container and the 100 empty datasets (one bulk call). */
const prepare = async (call: Call): Promise<void> => {
  expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
  expectStatus(await call('POST', `/rses/${RSE}`, {}), 201, 'RSE');
  const domains = {
    lan: { read: 1, write: 1, delete: 1 },
    wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
  };
  const protocol = {
    hostname: 'xrd.example.org',
    port: 1094,
    prefix: '/data',
    impl: 'rucio.rse.protocols.xrootd.Default',
    domains,
  };
  expectStatus(await call('POST', `/rses/${RSE}/protocols/root`, protocol), 201, 'protocol');
  const collections = [
    { scope: SCOPE, name: 'container', type: 'CONTAINER' },
    ...Array.from({ length: DATASETS }, (_, index) => ({ scope: SCOPE, name: `dataset${index}`, type: 'DATASET' })),
  ];
  expectStatus(await call('POST', '/dids', collections), 201, 'datasets');
};

/**
 * Registers the 100 000 files: one attach with an RSE per dataset (1000 files, the schema's
 * maximum per call), which creates the files, registers their replicas and attaches them in one
 * atomic step, CONCURRENCY calls at a time; then attaches the datasets to the container.
 */
const register = async (call: Call): Promise<void> => {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < DATASETS; index = next++) {
      const dids = Array.from({ length: FILES_PER_DATASET }, (_, offset) => ({
        scope: SCOPE,
        name: `file.${index}.${offset}`,
        bytes: 1_000_000 + offset,
        adler32: '0cc737eb',
      }));
      expectStatus(
        await call('POST', `/dids/${SCOPE}/dataset${index}/dids`, { rse: RSE, dids }),
        201,
        `attach to dataset${index}`,
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const datasets = Array.from({ length: DATASETS }, (_, index) => ({ scope: SCOPE, name: `dataset${index}` }));
  expectStatus(await call('POST', `/dids/${SCOPE}/container/dids`, { dids: datasets }), 201, 'attach datasets');
};

/**
 * Projects everything the API process wrote, in this process, from scratch: the projections' own
 * rate, with nothing else competing for the CPU. Returns the milliseconds until caught up.
 */
const projectAll = (dataDir: string): Promise<number> =>
  withProjectionRunner(dataDir, async (runner, { eventStore }) => {
    const head = await eventStore.headPosition();
    return timed(async () => {
      await runner.start();
      if (!(await runner.waitFor(head, 600_000))) throw new Error('the projections did not catch up');
    });
  });

/** Streams the container's replicas, counting lines and sampling the server's memory meanwhile. */
const streamContainer = async (
  server: ServerProcess,
  token: string,
): Promise<{ rows: number; ms: number; rssBefore: number; rssPeak: number }> => {
  // Anonymous memory: the read store maps its database file, whose pages count in VmRSS as they are read.
  const rssBefore = server.anonymousRssMiB();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, server.anonymousRssMiB())), 10);
  let rows = 0;
  const ms = await timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const payload = JSON.stringify({ dids: [{ scope: SCOPE, name: 'container' }] });
        const req = request(
          new URL('/replicas/list', server.url),
          {
            method: 'POST',
            headers: { 'X-Svc-Auth-Token': token, 'Content-Length': String(Buffer.byteLength(payload)) },
          },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`list: ${res.statusCode}`));
            res.on('data', (chunk: Buffer) => {
              // indexOf scans natively; a byte-by-byte loop here made the client slower than the server.
              for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows += 1;
            });
            res.on('end', () => resolve());
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      }),
  );
  clearInterval(sampler);
  return { rows, ms, rssBefore, rssPeak };
};

/**
 * 100 000 files in 100 datasets, one replica each, registered through the API; then the replicas
 * of the 100 000-file container listed as one NDJSON stream, as clients see it (each call answers
 * once the read models show it). Then the same registration split in two: an API process without
 * projections, and the projections alone over what it wrote. The raw SQLite append rate of the
 * same machine, measured in the same run, is the baseline.
 */
export const runReplicaBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const rawRate = rawBaselineRate();
  rows.push({ ...rawRate, unit: 'rows/s' });

  // As clients see it: one process serving API and projections, each call answering once the
  // read models show it.
  const dir = tempDir();
  const server = await startDms(dir.path);
  try {
    const token = await login(server);
    const call = httpClient(server, token, CONCURRENCY + 1);
    await prepare(call);
    const ms = await timed(() => register(call));
    rows.push({
      name: `register ${FILES} files (attach with RSE, 1000 per call, ${CONCURRENCY} in flight), read models included`,
      value: perSecond(FILES, ms),
      unit: 'files/s',
      baseline: rawRate,
    });
    const listing = await streamContainer(server, token);
    if (listing.rows !== FILES) throw new Error(`listed ${listing.rows} files, expected ${FILES}`);
    rows.push({
      name: `list the replicas of the ${FILES}-file container (NDJSON stream)`,
      value: perSecond(listing.rows, listing.ms),
      unit: 'rows/s',
    });
    rows.push({ name: 'server anonymous RSS before the listing', value: listing.rssBefore, unit: 'MiB' });
    rows.push({ name: 'server anonymous RSS, peak while streaming', value: listing.rssPeak, unit: 'MiB' });
    // Flat memory: streaming the same 100 000 rows twice more must not raise the peak further.
    const again = [await streamContainer(server, token), await streamContainer(server, token)];
    rows.push({
      name: 'server anonymous RSS, peak while streaming it twice more',
      value: Math.max(...again.map((run) => run.rssPeak)),
      unit: 'MiB',
    });
    rows.push({
      name: 'server peak RSS of the whole run (VmHWM, mapped database pages included)',
      value: server.peakRssMiB(),
      unit: 'MiB',
    });
  } finally {
    await server.stop();
    dir.dispose();
  }

  // Scaled out on this machine: an API process and a projector process, one core each; the API
  // answers once the projector's checkpoints show the write.
  const pairDir = tempDir();
  const environment = { DMS_DATA_DIR: pairDir.path, DMS_WORKERS: 'false', DMS_LOG_LEVEL: 'info' };
  const projector = await startProcess('bin/dms.ts', ['projector'], environment, 'projections running');
  const pairApi = await startProcess('bin/dms.ts', ['api'], { ...environment, PORT: '0' }, 'API listening');
  try {
    const call = httpClient(pairApi, await login(pairApi), CONCURRENCY + 1);
    await prepare(call);
    const ms = await timed(() => register(call));
    rows.push({
      name: 'the same with `dms api` + `dms projector` processes, read models included',
      value: perSecond(FILES, ms),
      unit: 'files/s',
      baseline: rawRate,
    });
  } finally {
    await pairApi.stop();
    await projector.stop();
    pairDir.dispose();
  }

  // The split: an API process without projections (answers at once), then the projections alone.
  // The API checks tokens and the facts of a registration (scope, RSE, datasets) in the read
  // models, so the login and the preparation are made with a projector running, which then leaves.
  const splitDir = tempDir();
  const splitEnvironment = { DMS_DATA_DIR: splitDir.path, DMS_WORKERS: 'false', DMS_LOG_LEVEL: 'info' };
  const setupProjector = await startProcess('bin/dms.ts', ['projector'], splitEnvironment, 'projections running');
  let token: string;
  try {
    const setupApi = await startProcess('bin/dms.ts', ['api'], { ...splitEnvironment, PORT: '0' }, 'API listening');
    try {
      token = await login(setupApi);
      await prepare(httpClient(setupApi, token, CONCURRENCY + 1));
    } finally {
      await setupApi.stop();
    }
  } finally {
    await setupProjector.stop();
  }
  const api = await startProcess(
    'bin/dms.ts',
    ['api'],
    { ...splitEnvironment, PORT: '0', DMS_READ_YOUR_WRITES_TIMEOUT_MS: '0' },
    'API listening',
  );
  try {
    const call = httpClient(api, token, CONCURRENCY + 1);
    const writeMs = await timed(() => register(call));
    rows.push({
      name: 'write side alone (API process without projections)',
      value: perSecond(FILES, writeMs),
      unit: 'files/s',
      baseline: rawRate,
    });
  } finally {
    await api.stop();
  }
  try {
    const projectMs = await projectAll(splitDir.path);
    rows.push({
      name: 'projections alone (every read model, from the start of the log)',
      value: perSecond(FILES, projectMs),
      unit: 'files/s',
      baseline: rawRate,
    });
  } finally {
    splitDir.dispose();
  }
  printTable(`Replicas: ${FILES} files in ${DATASETS} datasets (1 event per file: DidCreated with its replica)`, rows);
};
