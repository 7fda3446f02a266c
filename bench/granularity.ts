import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { printTable, type Row } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * What each bulk flow writes per item, figures that do not depend on the machine's load
 * (docs/architecture.md, "Event granularity"): one `dms serve` with its workers and the mock
 * transfer tool, BENCH_GRANULARITY_FILES files (default 2 000) taken through
 *
 * - registration: attached to a dataset with a replica on the source RSE, 1 000 per call;
 * - a rule on the dataset: its locks, the COPYING replicas they create and their transfer
 *   requests (held PREPARING);
 * - the transfers: preparer, submitter, poller and finisher until the rule is OK;
 * - deletion: the reaper deleting the replicas of the source RSE, made obsolete, with the files
 *   and the dataset (catalogue only: the RSE's protocol is Rucio's mock).
 *
 * For each flow: events, streams and stored event bytes per item, read from the event store by
 * position; read-model documents written (and removed) per item, read from the read store
 * (a document counts once however often the flow rewrote it); CPU per item of the server and
 * the processes it started (API workers, Redis).
 *
 * BENCH_GRANULARITY_BASELINE names another tree of this service (with its node_modules), e.g. main
 * exported by `git worktree add --detach /tmp/dms-main main` or `git archive main | tar -x -C
 * /tmp/dms-main` plus a link to node_modules: the same flows run on its server first, in the same
 * run, and every figure is printed beside that baseline's.
 */

const FILES = Number(process.env.BENCH_GRANULARITY_FILES ?? 2000);
const SCOPE = 'bench';
const DOMAINS = {
  lan: { read: 1, write: 1, delete: 1 },
  wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
};

/** Fields of /proc/<pid>/stat after the command: [0] state, [1] ppid, [11] utime, [12] stime. */
const statOf = (pid: number): string[] | undefined => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
};

/**
 * CPU time of the server and every process below it (`dms serve` runs its API workers as child
 * processes on a multi-core machine, and a private Redis), in ms.
 */
const cpuMs = (pid: number): number => {
  const stats = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      const fields = statOf(Number(entry));
      return fields ? [{ pid: Number(entry), ppid: Number(fields[1]), fields }] : [];
    });
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const stat of stats)
      if (!tree.has(stat.pid) && tree.has(stat.ppid)) {
        tree.add(stat.pid);
        grew = true;
      }
  }
  return stats
    .filter((stat) => tree.has(stat.pid))
    .reduce((sum, { fields }) => sum + ((Number(fields[11]) + Number(fields[12])) * 1000) / 100, 0);
};

const waitFor = async (what: string, condition: () => Promise<boolean>, timeoutMs = 900_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

type Snapshot = Map<string, Map<string, number>>;

/** The read store's documents, per table, with the position of the last event applied to each. */
const documents = (path: string): Snapshot => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const snapshot: Snapshot = new Map();
    const tables = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%\\_\\_g%' ESCAPE '\\'",
      )
      .all();
    for (const { name } of tables) {
      const rows = db
        .prepare<[], { id: string; pos: number | null }>(`SELECT id, json_extract(doc, '$._pos') AS pos FROM "${name}"`)
        .all();
      snapshot.set(name, new Map(rows.map((row) => [row.id, row.pos ?? -1])));
    }
    return snapshot;
  } finally {
    db.close();
  }
};

/** Documents new or rewritten between two snapshots, and documents gone. */
const documentChanges = (before: Snapshot, after: Snapshot): { written: number; removed: number } => {
  let written = 0;
  let removed = 0;
  for (const [table, rows] of after) {
    const earlier = before.get(table);
    for (const [id, pos] of rows) if (earlier?.get(id) !== pos) written += 1;
  }
  for (const [table, rows] of before) {
    const later = after.get(table);
    for (const id of rows.keys()) if (!later?.has(id)) removed += 1;
  }
  return { written, removed };
};

const head = (path: string): number => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events').get()?.head ?? 0;
  } finally {
    db.close();
  }
};

/** Events, streams and data bytes between two positions, with the count of each type. */
const eventsBetween = (path: string, from: number, to: number) => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const totals = db
      .prepare<[number, number], { events: number; streams: number; bytes: number }>(
        'SELECT count(*) AS events, count(DISTINCT stream) AS streams, sum(length(data) + length(metadata)) AS bytes FROM events WHERE position > ? AND position <= ?',
      )
      .get(from, to)!;
    const types = db
      .prepare<[number, number], { type: string; n: number }>(
        'SELECT type, count(*) AS n FROM events WHERE position > ? AND position <= ? GROUP BY type ORDER BY n DESC',
      )
      .all(from, to);
    return { ...totals, types };
  } finally {
    db.close();
  }
};

const addRse = async (call: Call, rse: string, protocol: Record<string, unknown>, properties: object = {}) => {
  expectStatus(await call('POST', `/rses/${rse}`, properties), 201, `RSE ${rse}`);
  expectStatus(
    await call('POST', `/rses/${rse}/protocols/${String(protocol.scheme)}`, protocol),
    201,
    `protocol of ${rse}`,
  );
};

const ruleOf = async (call: Call, ruleId: string): Promise<Record<string, number | string>> => {
  const response = await call('GET', `/rules/${ruleId}`);
  expectStatus(response, 200, 'rule');
  return JSON.parse(response.text) as Record<string, number | string>;
};

/** A write the read models must show before it answers: every event before it is projected then. */
const settle = async (call: Call): Promise<void> =>
  expectStatus(await call('POST', '/config', { bench: { settled: Date.now() } }), 201, 'settle');

type Profile = Readonly<{ rows: Row[]; types: string[] }>;

const profile = async (tree: string | undefined): Promise<Profile> => {
  const dir = tempDir();
  const data = join(dir.path, 'data');
  const eventsPath = join(data, 'events.sqlite');
  const readPath = join(data, 'readmodels.sqlite');
  let server: ServerProcess | undefined;
  const rows: Row[] = [];
  const types: string[] = [];
  try {
    server = await startProcess(
      'bin/dms.ts',
      ['serve'],
      // One group in one file: the documents counted there, and a write that settles waits for every projection.
      { DMS_DATA_DIR: data, PORT: '0', DMS_LOG_LEVEL: 'info', DMS_PROJECTION_LAYOUT: 'single' },
      'API listening',
      tree,
    );
    const running = server;
    const call = client(server, await login(server));
    expectStatus(
      await call('POST', '/config', {
        conveyor: { use_preparer: true },
        'conveyor-preparer': { interval: 86_400 },
        reaper: { interval: 1, chunk_size: 1000 },
      }),
      201,
      'config',
    );
    // The worker host follows a changed interval within 10 s: until then the preparer may still
    // run every second and prepare the rule's requests inside the locks' flow.
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    const root = (rse: string) => ({
      scheme: 'root',
      hostname: `${rse.toLowerCase()}.example.org`,
      port: 1094,
      prefix: '/data',
      impl: 'rucio.rse.protocols.xrootd.Default',
      domains: DOMAINS,
    });
    await addRse(call, 'SOURCE', root('SOURCE'));
    await addRse(call, 'TARGET', root('TARGET'));
    expectStatus(await call('POST', '/rses/SOURCE/distances/TARGET', { distance: 1 }), 201, 'distance');
    // Replicas the reaper takes: obsolete as they are registered, on Rucio's mock protocol (catalogue only).
    await addRse(
      call,
      'TRASH',
      { ...root('TRASH'), scheme: 'mock', impl: 'rucio.rse.protocols.mock.Default' },
      { availability_delete: false },
    );
    expectStatus(await call('POST', '/rses/TRASH/attr/tombstone_delay', { value: '-1' }), 201, 'tombstones');
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: 'ds', type: 'DATASET' }]), 201, 'dataset');
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: 'trash', type: 'DATASET' }]), 201, 'dataset');
    const attach = async (dataset: string, rse: string, prefix: string) => {
      for (let start = 0; start < FILES; start += 1000) {
        const dids = Array.from({ length: Math.min(1000, FILES - start) }, (_, offset) => ({
          scope: SCOPE,
          name: `${prefix}.${start + offset}`,
          bytes: 1_000_000,
          adler32: '0cc737eb',
        }));
        expectStatus(await call('POST', `/dids/${SCOPE}/${dataset}/dids`, { rse, dids }), 201, 'attach');
      }
    };
    await attach('trash', 'TRASH', 't');
    expectStatus(await call('PUT', `/dids/${SCOPE}/trash/status`, { open: false }), 200, 'close');
    await settle(call);

    const measure = async (flow: string, unit: string, work: () => Promise<void>) => {
      const before = { position: head(eventsPath), documents: documents(readPath), cpu: cpuMs(running.pid) };
      await work();
      await settle(call);
      const cpu = cpuMs(running.pid) - before.cpu;
      const position = head(eventsPath) - 1; // the settling write is not the flow's
      const events = eventsBetween(eventsPath, before.position, position);
      const changes = documentChanges(before.documents, documents(readPath));
      rows.push(
        { name: `${flow}: events per ${unit}`, value: events.events / FILES, unit: '' },
        { name: '  streams written per ' + unit, value: events.streams / FILES, unit: '' },
        { name: '  stored event bytes per ' + unit, value: events.bytes / FILES, unit: 'B' },
        { name: '  read-model documents written per ' + unit, value: changes.written / FILES, unit: '' },
        { name: '  read-model documents removed per ' + unit, value: changes.removed / FILES, unit: '' },
        { name: '  server CPU per ' + unit, value: cpu / FILES, unit: 'ms' },
      );
      types.push(`${flow}: ${events.types.map(({ type, n }) => `${type} ${n}`).join(', ')}`);
    };

    await measure('registration (attach with rse, 1 000 per call)', 'file', () => attach('ds', 'SOURCE', 'f'));
    let ruleId = '';
    await measure('a rule’s locks (with replicas and requests)', 'lock', async () => {
      const created = await call('POST', '/rules/', {
        dids: [{ scope: SCOPE, name: 'ds' }],
        copies: 1,
        rse_expression: 'TARGET',
      });
      expectStatus(created, 201, 'rule');
      ruleId = (JSON.parse(created.text) as string[])[0]!;
      await waitFor('the locks', async () => (await ruleOf(call, ruleId)).locks_replicating_cnt === FILES);
    });
    await measure('transfers to DONE (mock tool)', 'transfer', async () => {
      expectStatus(await call('POST', '/config', { 'conveyor-preparer': { interval: 1 } }), 201, 'wake the preparer');
      await waitFor('the rule OK', async () => (await ruleOf(call, ruleId)).state === 'OK');
    });
    await measure('the reaper (catalogue only, files and dataset erased)', 'replica', async () => {
      expectStatus(await call('PUT', '/rses/TRASH', { availability_delete: true }), 201, 'allow deletion');
      await waitFor('the RSE emptied', async () => {
        const response = await call('GET', '/rses/TRASH/usage?source=rucio');
        const [line] = response.text.split('\n').filter(Boolean);
        return line !== undefined && (JSON.parse(line) as { files: number }).files === 0;
      });
    });
  } finally {
    await server?.stop();
    dir.dispose();
  }
  return { rows, types };
};

export const runGranularityBenchmark = async (): Promise<void> => {
  const baselineTree = process.env.BENCH_GRANULARITY_BASELINE;
  const baseline = baselineTree ? await profile(baselineTree) : undefined;
  const current = await profile(undefined);
  const rows = current.rows.map((row, index) => {
    const before = baseline?.rows[index];
    return before && before.name === row.name && before.value > 0
      ? { ...row, baseline: { name: `baseline (${before.value.toFixed(2)})`, value: before.value } }
      : row;
  });
  printTable(`Event granularity: what each flow writes per item (${FILES} files)`, rows);
  if (baseline) {
    console.log('  baseline:');
    for (const line of baseline.types) console.log(`    ${line}`);
    console.log('  this tree:');
  }
  for (const line of current.types) console.log(`  ${line}`);
};
