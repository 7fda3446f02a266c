import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Acked, Ledger } from './ledger.ts';
import type { RootCall } from './rootClient.ts';
import type { Topology } from './workload.ts';

/**
 * What the kill matrix checks after each restart: every acknowledged write is visible at the
 * first read (`firstReads`), and every rule reaches OK with a lock on every file of its DID and
 * the posix copy present and identical to its source (`convergence`).
 */

/** Runs `work` over `items`, `width` at a time, in order of the list. */
const inParallel = async <T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
};

/** Why an acknowledged write does not show, or nothing when it does. */
const missingFrom = async (call: RootCall, topology: Topology, write: Acked): Promise<string | undefined> => {
  const { scope } = topology;
  switch (write.kind) {
    case 'account': {
      const answer = await call('GET', `/accounts/${write.account}`);
      return answer.status === 200 ? undefined : `account ${write.account}: ${answer.status}`;
    }
    case 'dataset': {
      const answer = await call('GET', `/dids/${scope}/${write.dataset}`);
      return answer.status === 200 ? undefined : `dataset ${write.dataset}: ${answer.status}`;
    }
    case 'replicas': {
      const absent: string[] = [];
      for (const name of write.files) {
        const answer = await call('GET', `/replicas/${scope}/${name}?all_states=true`);
        const rses = answer.status === 200 ? answer.lines<{ rses?: Record<string, unknown> }>()[0]?.rses : undefined;
        if (!rses || !(topology.source in rses)) absent.push(name);
      }
      return absent.length === 0 ? undefined : `replicas of ${absent.join(', ')} on ${topology.source}`;
    }
    case 'attach': {
      const answer = await call('GET', `/dids/${scope}/${write.dataset}/dids`);
      const children = new Set(answer.status === 200 ? answer.lines<{ name: string }>().map((line) => line.name) : []);
      const absent = write.files.filter((name) => !children.has(name));
      return absent.length === 0 ? undefined : `attach of ${absent.join(', ')} to ${write.dataset}`;
    }
    case 'metadata': {
      const answer = await call('GET', `/dids/${scope}/${write.did}/meta?plugin=JSON`);
      const value = answer.status === 200 ? answer.json<Record<string, unknown>>()[write.key] : undefined;
      return value === write.value
        ? undefined
        : `metadata ${write.key}=${write.value} of ${write.did}: ${String(value)}`;
    }
    case 'rule': {
      const answer = await call('GET', `/rules/${write.ruleId}`);
      return answer.status === 200 ? undefined : `rule ${write.ruleId} on ${write.did}: ${answer.status}`;
    }
  }
};

/** The acknowledged writes among `writes` that the service does not show, newest read first. */
export const firstReads = async (call: RootCall, topology: Topology, writes: readonly Acked[]): Promise<string[]> => {
  const lost: string[] = [];
  await inParallel([...writes].reverse(), 8, async (write) => {
    const missing = await missingFrom(call, topology, write);
    if (missing) lost.push(`round ${write.round}: ${missing}`);
  });
  return lost;
};

type RuleJson = Readonly<{
  state: string;
  scope: string;
  name: string;
  did_type?: string;
  locks_ok_cnt: number;
  locks_replicating_cnt: number;
  locks_stuck_cnt: number;
  error?: string | null;
}>;

/** The rules the service should bring to OK: the matrix's own, and one per subscription dataset. */
const rulesToCheck = async (
  call: RootCall,
  topology: Topology,
  ledger: Ledger,
): Promise<{ rules: string[]; unsubscribed: string[] }> => {
  const rules = new Set(ledger.ruleIds());
  const unsubscribed: string[] = [];
  await inParallel(
    ledger.datasets.filter((dataset) => dataset.startsWith('sub')),
    8,
    async (dataset) => {
      const answer = await call('GET', `/dids/${topology.scope}/${dataset}/rules`);
      const found = answer.status === 200 ? answer.lines<{ id: string }>() : [];
      if (found.length === 0) unsubscribed.push(`dataset ${dataset}: no rule from the subscription`);
      for (const rule of found) rules.add(rule.id);
    },
  );
  return { rules: [...rules], unsubscribed };
};

/** What is wrong with one rule, or nothing: OK, every file of its DID locked OK, each copy identical. */
const ruleProblem = async (call: RootCall, topology: Topology, ledger: Ledger, ruleId: string) => {
  const answer = await call('GET', `/rules/${ruleId}`);
  if (answer.status !== 200) return `rule ${ruleId}: ${answer.status}`;
  const rule = answer.json<RuleJson>();
  const counts = `ok ${rule.locks_ok_cnt}, replicating ${rule.locks_replicating_cnt}, stuck ${rule.locks_stuck_cnt}`;
  if (rule.state !== 'OK')
    return `rule ${ruleId} on ${rule.name}: ${rule.state} (${counts})${rule.error ? ` ${rule.error}` : ''}`;
  const content =
    rule.did_type === 'FILE' || ledger.files.has(rule.name)
      ? [rule.name]
      : (await call('GET', `/dids/${topology.scope}/${rule.name}/dids`)).lines<{ name: string }>().map((c) => c.name);
  const locks = new Map(
    (await call('GET', `/rules/${ruleId}/locks`))
      .lines<{ name: string; state: string; rse: string }>()
      .filter((lock) => lock.rse === topology.destination)
      .map((lock) => [lock.name, lock.state]),
  );
  const unlocked = content.filter((name) => locks.get(name) !== 'OK');
  if (unlocked.length > 0)
    return `rule ${ruleId} on ${rule.name}: OK but ${unlocked.length} of ${content.length} files without an OK lock (${unlocked.slice(0, 3).join(', ')})`;
  const different = content.filter((name) => {
    const file = ledger.files.get(name);
    if (!file) return false;
    const copy = join(topology.destinationRoot, file.path);
    return !existsSync(copy) || !readFileSync(copy).equals(readFileSync(join(topology.sourceRoot, file.path)));
  });
  if (different.length > 0)
    return `rule ${ruleId} on ${rule.name}: ${different.length} copies absent or different (${different.slice(0, 3).join(', ')})`;
  return undefined;
};

/**
 * Waits until every rule is OK with its copies (or `deadlineMs` passes) and returns what is still
 * wrong then: the stranded work.
 */
export const convergence = async (
  call: RootCall,
  topology: Topology,
  ledger: Ledger,
  deadlineMs: number,
): Promise<{ stranded: string[]; rules: number; ms: number }> => {
  const began = Date.now();
  for (;;) {
    const { rules, unsubscribed } = await rulesToCheck(call, topology, ledger);
    const problems: string[] = [...unsubscribed];
    await inParallel(rules, 4, async (ruleId) => {
      const problem = await ruleProblem(call, topology, ledger, ruleId).catch(
        (error: unknown) => `rule ${ruleId}: ${String(error)}`,
      );
      if (problem) problems.push(problem);
    });
    if (problems.length === 0 || Date.now() - began > deadlineMs)
      return { stranded: problems.sort(), rules: rules.length, ms: Date.now() - began };
    // Each look reads every rule; the next follows after a short breath.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
