import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Adler32 } from '../../../infra/transfer/checksums.ts';
import type { Ledger } from './ledger.ts';
import { pick, take, type FileEntry } from './ledger.ts';
import type { RootCall } from './rootClient.ts';

/**
 * What the kill matrix writes: a scope, two posix RSEs on this machine's disk (files are copied
 * for real by the posix tool), a subscription, a large dataset with its rule, then eight writers
 * of every kind at once (accounts, datasets, replica batches, attaches, metadata, dataset rules,
 * one-file rules, registrations into datasets), each remembering what was acknowledged.
 */

export type Topology = Readonly<{
  scope: string;
  source: string;
  destination: string;
  /** The storage roots of the two RSEs. */
  sourceRoot: string;
  destinationRoot: string;
  /** The dataset of `bigFiles` files and its rule. */
  big: Readonly<{ dataset: string; ruleId: string }>;
}>;

const DOMAINS = {
  lan: { read: 1, write: 1, delete: 1 },
  wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
};

export const expectAnswer = (answer: { status: number; text: string }, status: number, what: string): void => {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
};

/** Writes `count` random files on the source disk at the paths the RSE gives their names. */
const writeFiles = async (call: RootCall, topology: Topology, ledger: Ledger, count: number): Promise<FileEntry[]> => {
  const names = Array.from({ length: count }, () => ledger.next('f'));
  const query = names.map((name) => `lfn=${topology.scope}:${name}`).join('&');
  const answer = await call('GET', `/rses/${topology.source}/lfns2pfns?${query}`);
  expectAnswer(answer, 200, 'lfns2pfns');
  const pfns = answer.json<Record<string, string>>();
  return names.map((name) => {
    const path = new URL(pfns[`${topology.scope}:${name}`]!).pathname;
    const content = randomBytes(256 + Math.floor(Math.random() * 1792));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    const entry: FileEntry = {
      name,
      path: path.slice(topology.sourceRoot.length),
      bytes: content.length,
      adler32: new Adler32().update(content).digest(),
    };
    ledger.files.set(name, entry);
    return entry;
  });
};

const fileDid = (topology: Topology, file: FileEntry) => ({
  scope: topology.scope,
  name: file.name,
  bytes: file.bytes,
  adler32: file.adler32,
});

/** The scope, RSEs, subscription and large dataset (with its rule, injected asynchronously). */
export const prepareTopology = async (
  call: RootCall,
  ledger: Ledger,
  options: Readonly<{ runDir: string; tag: string; bigFiles: number }>,
): Promise<Topology> => {
  const scope = `km${options.tag}`;
  const source = `KM${options.tag.toUpperCase()}_SRC`;
  const destination = `KM${options.tag.toUpperCase()}_DST`;
  const sourceRoot = join(options.runDir, 'storage', 'source');
  const destinationRoot = join(options.runDir, 'storage', 'destination');
  expectAnswer(await call('POST', `/scopes/root/${scope}`), 201, 'scope');
  for (const [rse, root] of [
    [source, sourceRoot],
    [destination, destinationRoot],
  ] as const) {
    mkdirSync(root, { recursive: true });
    expectAnswer(await call('POST', `/rses/${rse}`, {}), 201, `RSE ${rse}`);
    expectAnswer(
      await call('POST', `/rses/${rse}/protocols/file`, {
        hostname: 'localhost',
        port: 0,
        prefix: root,
        impl: 'rucio.rse.protocols.posix.Default',
        domains: DOMAINS,
      }),
      201,
      `protocol of ${rse}`,
    );
  }
  expectAnswer(await call('POST', `/rses/${source}/distances/${destination}`, { distance: 1 }), 201, 'distance');
  expectAnswer(
    await call('POST', `/subscriptions/root/km${options.tag}`, {
      options: {
        filter: { scope: [scope], did_type: ['DATASET'], pattern: 'sub' },
        replication_rules: [{ copies: 1, rse_expression: destination }],
        comments: 'kill matrix',
        lifetime: null,
        retroactive: false,
      },
    }),
    201,
    'subscription',
  );
  const partial: Topology = {
    scope,
    source,
    destination,
    sourceRoot,
    destinationRoot,
    big: { dataset: '', ruleId: '' },
  };
  const dataset = 'big';
  expectAnswer(await call('POST', `/dids/${scope}/${dataset}`, { type: 'DATASET' }), 201, 'big dataset');
  for (let done = 0; done < options.bigFiles; done += 500) {
    const files = await writeFiles(call, partial, ledger, Math.min(500, options.bigFiles - done));
    expectAnswer(
      await call('POST', `/dids/${scope}/${dataset}/dids`, {
        rse: source,
        dids: files.map((f) => fileDid(partial, f)),
      }),
      201,
      'big dataset files',
    );
  }
  expectAnswer(await call('PUT', `/dids/${scope}/${dataset}/status`, { open: false }), 200, 'big dataset closed');
  const rule = await call('POST', '/rules/', {
    dids: [{ scope, name: dataset }],
    copies: 1,
    rse_expression: destination,
    asynchronous: true,
  });
  expectAnswer(rule, 201, 'big rule');
  const [ruleId] = rule.json<string[]>();
  ledger.record({ kind: 'rule', round: 0, ruleId: ruleId!, did: `${scope}:${dataset}` });
  return { ...partial, big: { dataset, ruleId: ruleId! } };
};

/**
 * One write of one writer; its acknowledgement goes into the ledger for `round`. False: it had
 * nothing to write yet (no dataset to attach to), and waits a little before it looks again.
 */
type Writer = (call: RootCall, topology: Topology, ledger: Ledger, round: number) => Promise<boolean | void>;

const accounts: Writer = async (call, _topology, ledger, round) => {
  const account = ledger.next('ka');
  const answer = await call('POST', `/accounts/${account}`, { type: 'USER', email: `${account}@example.org` });
  if (answer.status === 201) ledger.record({ kind: 'account', round, account });
};

const datasets: Writer = async (call, topology, ledger, round) => {
  // Every third matches the subscription: the transmogrifier gives it a rule.
  const subscribed = Math.random() < 1 / 3;
  const dataset = ledger.next(subscribed ? 'sub' : 'ds');
  const answer = await call('POST', `/dids/${topology.scope}/${dataset}`, { type: 'DATASET' });
  if (answer.status !== 201) return;
  ledger.record({ kind: 'dataset', round, dataset });
  ledger.datasets.push(dataset);
  if (!subscribed) ledger.unruledDatasets.push(dataset);
};

const replicaBatches: Writer = async (call, topology, ledger, round) => {
  const files = await writeFiles(call, topology, ledger, 5);
  const answer = await call('POST', '/replicas', {
    rse: topology.source,
    files: files.map((file) => fileDid(topology, file)),
  });
  if (answer.status !== 201) return;
  const names = files.map((file) => file.name);
  ledger.record({ kind: 'replicas', round, files: names });
  ledger.registered.push(...names);
  ledger.unruledFiles.push(...names);
};

const attaches: Writer = async (call, topology, ledger, round) => {
  const dataset = pick(ledger.datasets);
  const files = [take(ledger.registered), take(ledger.registered), take(ledger.registered)].filter(
    (name): name is string => name !== undefined,
  );
  if (!dataset || files.length === 0) return false;
  const answer = await call('POST', `/dids/${topology.scope}/${dataset}/dids`, {
    dids: files.map((name) => ({ scope: topology.scope, name })),
  });
  if (answer.status === 201) ledger.record({ kind: 'attach', round, dataset, files });
};

const metadata: Writer = async (call, topology, ledger, round) => {
  const did = pick([...ledger.datasets, ...ledger.unruledFiles.slice(-50)]);
  if (!did) return false;
  const key = `k${ledger.next('')}`;
  const value = ledger.next('v');
  const answer = await call('POST', `/dids/${topology.scope}/${did}/meta/${key}`, { value });
  if (answer.status === 201) ledger.record({ kind: 'metadata', round, did, key, value });
};

const datasetRules: Writer = async (call, topology, ledger, round) => {
  const dataset = take(ledger.unruledDatasets);
  if (!dataset) return false;
  const answer = await call('POST', '/rules/', {
    dids: [{ scope: topology.scope, name: dataset }],
    copies: 1,
    rse_expression: topology.destination,
    // Half through the injector, half placed at once.
    asynchronous: Math.random() < 0.5,
  });
  if (answer.status === 201)
    ledger.record({ kind: 'rule', round, ruleId: answer.json<string[]>()[0]!, did: `${topology.scope}:${dataset}` });
};

const fileRules: Writer = async (call, topology, ledger, round) => {
  const file = take(ledger.unruledFiles);
  if (!file) return false;
  const answer = await call('POST', '/rules/', {
    dids: [{ scope: topology.scope, name: file }],
    copies: 1,
    rse_expression: topology.destination,
  });
  if (answer.status === 201)
    ledger.record({ kind: 'rule', round, ruleId: answer.json<string[]>()[0]!, did: `${topology.scope}:${file}` });
};

/** Files registered and attached in one call: replicas, DIDs and content in one step. */
const registrationsIntoDatasets: Writer = async (call, topology, ledger, round) => {
  const dataset = pick(ledger.datasets);
  if (!dataset) return false;
  const files = await writeFiles(call, topology, ledger, 3);
  const answer = await call('POST', `/dids/${topology.scope}/${dataset}/dids`, {
    rse: topology.source,
    dids: files.map((file) => fileDid(topology, file)),
  });
  if (answer.status !== 201) return;
  const names = files.map((file) => file.name);
  ledger.record({ kind: 'replicas', round, files: names });
  ledger.record({ kind: 'attach', round, dataset, files: names });
};

export const WRITERS: readonly Readonly<{ name: string; write: Writer }>[] = [
  { name: 'accounts', write: accounts },
  { name: 'datasets', write: datasets },
  { name: 'replica batches', write: replicaBatches },
  { name: 'attaches', write: attaches },
  { name: 'metadata', write: metadata },
  { name: 'dataset rules', write: datasetRules },
  { name: 'one-file rules', write: fileRules },
  { name: 'registrations into datasets', write: registrationsIntoDatasets },
];

/**
 * Runs every writer in a loop until `stopped()`; a write that fails (the kill cut it, the service
 * is restarting) is simply not acknowledged, and the writer goes on after a short pause.
 */
export const runWriters = async (
  call: RootCall,
  topology: Topology,
  ledger: Ledger,
  round: number,
  stopped: () => boolean,
): Promise<{ failures: number }> => {
  let failures = 0;
  await Promise.all(
    WRITERS.map(async ({ write }) => {
      while (!stopped()) {
        let pause = 0;
        try {
          if ((await write(call, topology, ledger, round)) === false) pause = 20;
        } catch {
          failures += 1;
          pause = 50;
        }
        // Also when nothing was awaited: a loop of settled promises would starve every timer.
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }),
  );
  return { failures };
};
