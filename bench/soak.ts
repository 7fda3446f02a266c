import { Agent, request } from 'node:http';
import { startPrivateRedisServer, type PrivateRedisServer } from '../infra/queue/redisServer.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { printTable } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * `npm run bench soak`: one `dms serve` with its workers (as `npm start` runs it) under mixed
 * reads and writes for BENCH_SOAK_SECONDS (default 600) at BENCH_SOAK_CONNECTIONS (default 32)
 * connections, printing the server's memory every BENCH_SOAK_SAMPLE_SECONDS (default 30): the
 * resident set (VmRSS, which counts the pages of the memory-mapped SQLite files), its anonymous
 * part (RssAnon: heaps and buffers), and the main thread's V8 heap as its own metrics say.
 *
 * What a process holds should level off once its caches are full: the figure that matters is the
 * growth over the second half of the run, printed at the end beside the first half's. The data
 * itself grows all along (every write adds accounts, files, replicas, rules and tokens), which
 * the page cache of the read store and of the event store follow up to their bounds. One sample
 * is one moment of two garbage-collected heaps (the API's and the projection thread's), which move
 * by tens of MiB between collections: the growth compares the mean of the three samples around
 * the middle with the mean of the last three, and the peaks of the two halves.
 *
 * BENCH_SOAK_SPLIT=1 runs `dms api`, `dms projector` and `dms worker` as three processes on one
 * private redis-server instead, and prints the resident set of each: which part holds what.
 */

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const CONNECTIONS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 32);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 30);
const SPLIT = process.env.BENCH_SOAK_SPLIT === '1';
const SCOPE = 'soak';
const RSES = ['SOAK_A', 'SOAK_B'] as const;

type Sample = Readonly<{
  seconds: number;
  requests: number;
  failures: number;
  rss: number;
  anonymous: number;
  heapUsed: number;
  /** Split runs: the resident sets of the projector and worker processes. */
  others: readonly number[];
}>;

/** The operations of the mix, with their weights: writes of every size, reads, lists, errors, logins. */
type Operation = Readonly<{ name: string; weight: number; run: (state: SoakState, call: RawCall) => Promise<number> }>;

type RawCall = (method: string, path: string, body?: unknown) => Promise<number>;

/** Names made so far, for reads to pick from. */
type SoakState = {
  counter: number;
  accounts: string[];
  datasets: string[];
  files: string[];
};

const pick = <T>(items: readonly T[]): T | undefined =>
  items.length === 0 ? undefined : items[Math.floor(Math.random() * items.length)];

const OPERATIONS: readonly Operation[] = [
  {
    name: 'POST /accounts/{new}',
    weight: 12,
    run: async (state, call) => {
      const name = `soak${state.counter++}`;
      const status = await call('POST', `/accounts/${name}`, { type: 'USER', email: `${name}@example.org` });
      if (status === 201) state.accounts.push(name);
      return status === 201 ? 0 : 1;
    },
  },
  {
    name: 'POST /dids (a dataset)',
    weight: 5,
    run: async (state, call) => {
      const name = `ds${state.counter++}`;
      const status = await call('POST', '/dids', [{ scope: SCOPE, name, type: 'DATASET' }]);
      if (status === 201) state.datasets.push(name);
      return status === 201 ? 0 : 1;
    },
  },
  {
    name: 'POST /dids/{scope}/{dataset}/dids (10 files with replicas)',
    weight: 12,
    run: async (state, call) => {
      const dataset = pick(state.datasets);
      if (!dataset) return 0;
      const names = Array.from({ length: 10 }, () => `f${state.counter++}`);
      const status = await call('POST', `/dids/${SCOPE}/${dataset}/dids`, {
        rse: RSES[0],
        dids: names.map((name) => ({ scope: SCOPE, name, bytes: 1000, adler32: '0cc737eb' })),
      });
      if (status === 201) state.files.push(...names);
      return status === 201 ? 0 : 1;
    },
  },
  {
    name: 'POST /rules/ (a dataset to the other RSE: locks and mock transfers)',
    weight: 2,
    run: async (state, call) => {
      const dataset = pick(state.datasets);
      if (!dataset) return 0;
      const status = await call('POST', '/rules/', {
        dids: [{ scope: SCOPE, name: dataset }],
        copies: 1,
        rse_expression: RSES[1],
        lifetime: 60,
      });
      // A second rule of the same account on the same dataset and RSE is a duplicate (409).
      return status === 201 || status === 409 ? 0 : 1;
    },
  },
  {
    name: 'GET /accounts/{name}',
    weight: 15,
    run: async (state, call) => ((await call('GET', `/accounts/${pick(state.accounts) ?? 'root'}`)) === 200 ? 0 : 1),
  },
  {
    name: 'GET /accounts/{unknown} (404)',
    weight: 5,
    run: async (state, call) => ((await call('GET', `/accounts/nobody${state.counter++}`)) === 404 ? 0 : 1),
  },
  {
    name: 'GET /dids/{scope}/{dataset}/dids (NDJSON)',
    weight: 10,
    run: async (state, call) => {
      const dataset = pick(state.datasets);
      return dataset && (await call('GET', `/dids/${SCOPE}/${dataset}/dids`)) !== 200 ? 1 : 0;
    },
  },
  {
    name: 'GET /replicas/{scope}/{file}',
    weight: 10,
    run: async (state, call) => {
      const file = pick(state.files);
      return file && (await call('GET', `/replicas/${SCOPE}/${file}`)) !== 200 ? 1 : 0;
    },
  },
  {
    name: 'GET /dids/{scope}/dids/search (a name pattern)',
    weight: 5,
    run: async (state, call) =>
      (await call('GET', `/dids/${SCOPE}/dids/search?type=all&name=f${Math.floor(Math.random() * 100)}*`)) === 200
        ? 0
        : 1,
  },
  {
    name: 'GET /rules/{id} of the dataset',
    weight: 5,
    run: async (state, call) => {
      const dataset = pick(state.datasets);
      return dataset && (await call('GET', `/dids/${SCOPE}/${dataset}/rules`)) !== 200 ? 1 : 0;
    },
  },
  {
    name: 'GET /audit/dids/{scope}/{file}/events',
    weight: 3,
    run: async (state, call) => {
      const file = pick(state.files);
      return file && (await call('GET', `/audit/dids/${SCOPE}/${file}/events`)) !== 200 ? 1 : 0;
    },
  },
  {
    name: 'GET /auth/userpass (a new token)',
    weight: 3,
    run: async (_state, call) => ((await call('GET', '/auth/userpass')) === 200 ? 0 : 1),
  },
];

const TOTAL_WEIGHT = OPERATIONS.reduce((sum, operation) => sum + operation.weight, 0);

const chooseOperation = (): Operation => {
  let ticket = Math.random() * TOTAL_WEIGHT;
  for (const operation of OPERATIONS) {
    ticket -= operation.weight;
    if (ticket < 0) return operation;
  }
  return OPERATIONS[OPERATIONS.length - 1]!;
};

/** A keep-alive client that reads and drops each body, answering the status only. */
const rawClient = (server: ServerProcess, token: string): RawCall => {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  return (method, path, body) =>
    new Promise((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(path, server.url),
        {
          method,
          agent,
          headers: {
            'X-Svc-Auth-Token': token,
            // The login needs the password; other routes ignore these headers.
            'X-Svc-Username': 'ddmlab',
            'X-Svc-Password': 'secret',
            ...(payload ? { 'Content-Length': String(Buffer.byteLength(payload)) } : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(payload);
    });
};

const addRse = async (call: Call, rse: string): Promise<void> => {
  expectStatus(await call('POST', `/rses/${rse}`, {}), 201, `RSE ${rse}`);
  const domains = {
    lan: { read: 1, write: 1, delete: 1 },
    wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
  };
  expectStatus(
    await call('POST', `/rses/${rse}/protocols/mock`, {
      hostname: `${rse.toLowerCase()}.example.org`,
      port: 0,
      prefix: '/data',
      impl: 'rucio.rse.protocols.mock.Default',
      domains,
    }),
    201,
    `protocol of ${rse}`,
  );
};

/** The main thread's V8 heap in use, in MiB, from the server's own metrics (prom-client's defaults). */
const heapUsedMiB = async (server: ServerProcess): Promise<number> => {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(text);
  return match ? Number(match[1]) / 1024 / 1024 : Number.NaN;
};

type Field = 'rss' | 'anonymous' | 'heapUsed';

/** The mean of a field over the samples next to `index` (three, fewer at the ends). */
const around = (samples: readonly Sample[], index: number, field: Field): number => {
  const window = samples.slice(Math.max(0, index - 1), Math.min(samples.length, index + 2));
  return window.reduce((sum, sample) => sum + sample[field], 0) / window.length;
};

const growth = (from: number, to: number): string =>
  `${(to - from).toFixed(0)} MiB (${(((to - from) / from) * 100).toFixed(1)} %)`;

type Servers = Readonly<{ api: ServerProcess; others: readonly ServerProcess[]; redis?: PrivateRedisServer }>;

/** One `dms serve`, or (split) an API, a projector and a worker on a private Redis. */
const startServers = async (dataDir: string): Promise<Servers> => {
  // As `npm start` runs it, request logs included.
  const environment = { DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'info' };
  if (!SPLIT)
    return {
      api: await startProcess('bin/dms.ts', ['serve'], { ...environment, PORT: '0' }, 'API listening'),
      others: [],
    };
  const redis = await startPrivateRedisServer();
  const shared = { ...environment, REDIS_URL: redis.url };
  const projector = await startProcess('bin/dms.ts', ['projector'], shared, 'projections running');
  const api = await startProcess('bin/dms.ts', ['api'], { ...shared, PORT: '0' }, 'API listening');
  const worker = await startProcess('bin/dms.ts', ['worker'], shared, 'daemon roles running');
  return { api, others: [projector, worker], redis };
};

export const runSoak = async (): Promise<void> => {
  const dir = tempDir();
  let servers: Servers | undefined;
  try {
    servers = await startServers(dir.path);
    const { api: server, others } = servers;
    const token = await login(server);
    const setup = client(server, token);
    expectStatus(await setup('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    for (const rse of RSES) await addRse(setup, rse);
    expectStatus(await setup('POST', `/rses/${RSES[0]}/distances/${RSES[1]}`, { distance: 1 }), 201, 'distance');
    const state: SoakState = { counter: 0, accounts: [], datasets: [], files: [] };
    const call = rawClient(server, token);
    for (let index = 0; index < 20; index += 1) await OPERATIONS[1]!.run(state, call);

    let requests = 0;
    let failures = 0;
    const failed = new Map<string, number>();
    const timings = new Map<string, { count: number; ms: number }>();
    const started = Date.now();
    const deadline = started + SECONDS * 1000;
    const samples: Sample[] = [];
    const sample = async (): Promise<void> => {
      const point: Sample = {
        seconds: Math.round((Date.now() - started) / 1000),
        requests,
        failures,
        rss: server.rssMiB(),
        anonymous: server.anonymousRssMiB(),
        heapUsed: await heapUsedMiB(server),
        others: others.map((other) => other.rssMiB()),
      };
      samples.push(point);
      const previous = samples[samples.length - 2];
      const rate = previous ? (point.requests - previous.requests) / (point.seconds - previous.seconds || 1) : 0;
      console.log(
        `  ${String(point.seconds).padStart(4)} s  ${String(point.requests).padStart(8)} requests ` +
          `(${rate.toFixed(0).padStart(5)}/s, ${point.failures} failed)  RSS ${point.rss.toFixed(0)} MiB, ` +
          `anonymous ${point.anonymous.toFixed(0)} MiB, main heap ${point.heapUsed.toFixed(0)} MiB` +
          (SPLIT ? `; projector ${point.others[0]!.toFixed(0)} MiB, worker ${point.others[1]!.toFixed(0)} MiB` : ''),
      );
    };
    console.log(
      `\nSoak: ${CONNECTIONS} connections of mixed reads and writes for ${SECONDS} s, memory every ${SAMPLE_SECONDS} s` +
        (SPLIT ? " (api, projector and worker processes; RSS is the API's)" : ''),
    );
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_SECONDS * 1000);
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < deadline) {
          const operation = chooseOperation();
          const begin = Date.now();
          const failure = await operation.run(state, call);
          const timing = timings.get(operation.name) ?? { count: 0, ms: 0 };
          timing.count += 1;
          timing.ms += Date.now() - begin;
          timings.set(operation.name, timing);
          requests += 1;
          if (failure > 0) {
            failures += 1;
            failed.set(operation.name, (failed.get(operation.name) ?? 0) + 1);
          }
        }
      }),
    );
    clearInterval(sampler);
    await sample();

    const last = samples[samples.length - 1]!;
    let middle = 0;
    samples.forEach((point, index) => {
      if (Math.abs(point.seconds - last.seconds / 2) < Math.abs(samples[middle]!.seconds - last.seconds / 2))
        middle = index;
    });
    printTable('Soak summary', [
      { name: 'requests', value: last.requests, unit: `(${failures} failed)` },
      { name: 'requests per second', value: last.requests / last.seconds, unit: 'req/s' },
    ]);
    for (const [field, label] of [
      ['rss', 'RSS'],
      ['anonymous', 'anonymous RSS'],
      ['heapUsed', 'main heap in use'],
    ] as const) {
      const [atStart, atMiddle, atEnd] = [0, middle, samples.length - 1].map((index) =>
        around(samples, index, field),
      ) as [number, number, number];
      console.log(
        `  ${label}: ${atStart.toFixed(0)} / ${atMiddle.toFixed(0)} / ${atEnd.toFixed(0)} MiB at the start / middle / end; ` +
          `first half ${growth(atStart, atMiddle)}, second half ${growth(atMiddle, atEnd)}`,
      );
    }
    const peak = (points: readonly Sample[]) => Math.max(...points.map((point) => point.rss)).toFixed(0);
    console.log(
      `  peak RSS: first half ${peak(samples.slice(0, middle + 1))} MiB, second half ${peak(samples.slice(middle))} MiB`,
    );
    console.log(
      `  data written: ${state.accounts.length} accounts, ${state.datasets.length} datasets, ${state.files.length} files`,
    );
    for (const [name, count] of failed) console.log(`  failed: ${count} × ${name}`);
    for (const [name, { count, ms }] of timings)
      console.log(`  ${name}: ${count} requests, ${(ms / count).toFixed(1)} ms on average`);
  } finally {
    await servers?.api.stop();
    for (const other of servers?.others ?? []) await other.stop();
    await servers?.redis?.stop();
    dir.dispose();
  }
};
