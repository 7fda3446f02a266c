import { join } from 'node:path';
import { convergence, firstReads } from './checks.ts';
import { serveDeployment, splitDeployment, type Deployment, type KillKind, type Recovery } from './deployments.ts';
import { Ledger, type WriteKind } from './ledger.ts';
import { until } from './processTree.ts';
import { rootCalls } from './rootClient.ts';
import { prepareTopology, runWriters } from './workload.ts';

/**
 * The kill matrix (issue 34): a deployment under eight concurrent writers of every kind, one
 * process of it killed with SIGKILL per round (each kind in turn), brought back, and checked:
 * every write acknowledged so far is visible at the first read after the restart, and every rule
 * reaches OK with a lock on each of its files and the posix copy identical to its source. Used by
 * the suite (test/workers/killMatrix.test.ts, a few small rounds) and `npm run bench crash`.
 */

export type KillMatrixOptions = Readonly<{
  deployment: 'serve' | 'split';
  runDir: string;
  /** Rounds; the deployment's kinds of process are killed in turn (or `kinds`, in turn). */
  rounds: number;
  kinds?: readonly KillKind[];
  /** Writes acknowledged in a round before its kill. */
  acksPerRound: number;
  /** Files of the large dataset whose rule is injected while the first round writes. */
  bigFiles: number;
  /** How long the rules may take to reach OK after a restart before what is left counts as stranded. */
  convergenceMs: number;
  /** Extra environment of every dms process. */
  environment?: Record<string, string>;
  /** The tree whose `dms` runs (default this one): an older tree as a baseline. */
  root?: string;
  /** `/config` sections set before the rounds (shorter bounds for a quicker run in the suite). */
  settings?: Record<string, Record<string, unknown>>;
  /** Called with the data directory once the rounds are over and the deployment stopped. */
  afterwards?: (dataDir: string) => Promise<void>;
  log?: (line: string) => void;
}>;

export type RoundResult = Readonly<{
  round: number;
  kind: KillKind;
  acked: Record<WriteKind, number>;
  failedWrites: number;
  recovery: Recovery;
  /** Acknowledged writes (of every round so far) the first reads after the restart did not show. */
  lost: readonly string[];
  /** What had not converged by the deadline. */
  stranded: readonly string[];
  rules: number;
  convergedMs: number;
}>;

export type KillMatrixResult = Readonly<{ deployment: string; rounds: readonly RoundResult[]; ackedTotal: number }>;

const rootOf = (options: KillMatrixOptions): { root?: string } => (options.root ? { root: options.root } : {});

const total = (counts: Record<WriteKind, number>): number => Object.values(counts).reduce((sum, n) => sum + n, 0);

export const runKillMatrix = async (options: KillMatrixOptions): Promise<KillMatrixResult> => {
  const log = options.log ?? (() => undefined);
  const deployment: Deployment =
    options.deployment === 'serve'
      ? serveDeployment(options.runDir, { environment: options.environment ?? {}, ...rootOf(options) })
      : splitDeployment(options.runDir, { environment: options.environment ?? {}, ...rootOf(options) });
  const kinds = options.kinds ?? deployment.kinds;
  const ledger = new Ledger();
  const results: RoundResult[] = [];
  await deployment.start();
  try {
    const call = rootCalls(() => deployment.url());
    if (options.settings) {
      const answer = await call('POST', '/config', options.settings);
      if (answer.status !== 201) throw new Error(`settings: ${answer.status} ${answer.text}`);
    }
    const tag = Math.random().toString(36).slice(2, 8);
    const topology = await prepareTopology(call, ledger, { runDir: options.runDir, tag, bigFiles: options.bigFiles });
    log(
      `${deployment.name}: topology ready (scope ${topology.scope}, ${options.bigFiles} files in ${topology.big.dataset})`,
    );
    for (let round = 1; round <= options.rounds; round += 1) {
      const kind = kinds[(round - 1) % kinds.length]!;
      let stopped = false;
      const writing = runWriters(call, topology, ledger, round, () => stopped);
      try {
        await until(
          () => total(ledger.counts(round)) >= options.acksPerRound,
          600_000,
          `${options.acksPerRound} writes acknowledged in round ${round}`,
        );
        await deployment.kill(kind);
      } finally {
        stopped = true;
      }
      const { failures } = await writing;
      const recovery = await deployment.recover(kind);
      const lost = await firstReads(call, topology, ledger.acked);
      const converged = await convergence(call, topology, ledger, options.convergenceMs);
      const result: RoundResult = {
        round,
        kind,
        acked: ledger.counts(round),
        failedWrites: failures,
        recovery,
        lost,
        stranded: converged.stranded,
        rules: converged.rules,
        convergedMs: converged.ms,
      };
      results.push(result);
      log(
        `${deployment.name} round ${round}: kill -9 ${kind}; ${total(result.acked)} writes acknowledged, ` +
          `${failures} cut; back in ${recovery.ms} ms (${recovery.how}); ${lost.length} lost; ` +
          `${converged.stranded.length} of ${converged.rules} rules stranded after ${converged.ms} ms`,
      );
      for (const line of [...lost.slice(0, 20), ...converged.stranded.slice(0, 20)]) log(`    ${line}`);
    }
  } finally {
    await deployment.stop();
  }
  await options.afterwards?.(join(options.runDir, 'data'));
  return { deployment: deployment.name, rounds: results, ackedTotal: ledger.acked.length };
};
