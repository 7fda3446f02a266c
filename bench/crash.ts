import type { KillKind } from './lib/killMatrix/deployments.ts';
import { runKillMatrix, type KillMatrixResult } from './lib/killMatrix/killMatrix.ts';
import { printColumns } from './lib/report.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * `npm run bench crash`: the kill matrix's long run (issue 34). Each deployment (`dms serve` with
 * two API workers and its private redis-server; the split `dms api` + `dms projector` + `dms
 * worker` on an operator's redis-server) runs BENCH_CRASH_ROUNDS rounds (default 12): eight
 * writers of every kind until BENCH_CRASH_ACKS writes (default 300) are acknowledged, a `kill -9`
 * of one process (each kind in turn), its return, then the checks: every write acknowledged so far
 * visible at the first read after the restart, every rule OK with its posix copies identical
 * within BENCH_CRASH_CONVERGENCE_SECONDS (default 300). The first round also injects a rule on a
 * dataset of BENCH_CRASH_BIG_FILES files (default 3000). BENCH_CRASH_DEPLOYMENTS picks
 * `serve`, `split` or both (default); BENCH_CRASH_KINDS limits the kinds killed (comma-separated);
 * BENCH_CRASH_ROOT runs another tree's `dms` (a worktree of the code before a change);
 * BENCH_CRASH_ENVIRONMENT gives every dms process more settings (`DMS_PROJECTION_THREAD=false,...`).
 *
 * It prints one line per round, then per deployment: rounds, kills, acknowledged writes, what was
 * lost (acknowledged, not read back) and what was stranded (not converged by the deadline). Runs
 * keep their directories (logs of every process) when something was lost or stranded.
 */
const ROUNDS = Number(process.env.BENCH_CRASH_ROUNDS ?? 12);
const ACKS = Number(process.env.BENCH_CRASH_ACKS ?? 300);
const BIG_FILES = Number(process.env.BENCH_CRASH_BIG_FILES ?? 3000);
const CONVERGENCE_MS = Number(process.env.BENCH_CRASH_CONVERGENCE_SECONDS ?? 300) * 1000;
const DEPLOYMENTS = (process.env.BENCH_CRASH_DEPLOYMENTS ?? 'serve,split').split(',').filter(Boolean);
/** BENCH_CRASH_ROOT: the tree whose `dms` runs (default this one), e.g. a worktree of the code before a change. */
const ROOT = process.env.BENCH_CRASH_ROOT;
/** BENCH_CRASH_ENVIRONMENT: extra settings of every dms process, `NAME=value` comma-separated. */
const ENVIRONMENT = Object.fromEntries(
  (process.env.BENCH_CRASH_ENVIRONMENT ?? '')
    .split(',')
    .filter((pair) => pair.includes('='))
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const KINDS = process.env.BENCH_CRASH_KINDS?.split(',').filter(Boolean) as KillKind[] | undefined;

export const runCrashBenchmark = async (): Promise<void> => {
  const results: KillMatrixResult[] = [];
  for (const deployment of DEPLOYMENTS) {
    if (deployment !== 'serve' && deployment !== 'split') throw new Error(`unknown deployment ${deployment}`);
    const dir = tempDir();
    console.log(`\n${deployment}: ${ROUNDS} rounds in ${dir.path}`);
    let keep = true;
    try {
      const result = await runKillMatrix({
        deployment,
        runDir: dir.path,
        rounds: ROUNDS,
        acksPerRound: ACKS,
        bigFiles: BIG_FILES,
        convergenceMs: CONVERGENCE_MS,
        ...(ROOT ? { root: ROOT } : {}),
        environment: ENVIRONMENT,
        ...(KINDS ? { kinds: KINDS.filter((kind) => kind.length > 0) } : {}),
        log: (line) => console.log(`  ${line}`),
      });
      results.push(result);
      keep = result.rounds.some((round) => round.lost.length > 0 || round.stranded.length > 0);
    } finally {
      if (keep) console.log(`  kept ${dir.path} (process logs: *.log)`);
      else dir.dispose();
    }
  }
  printColumns('kill matrix', [
    ['deployment', 'rounds', 'kills', 'acked writes', 'lost', 'stranded (last round)', 'rounds with any'],
    ...results.map((result) => {
      const last = result.rounds.at(-1);
      return [
        result.deployment,
        String(result.rounds.length),
        result.rounds.map((round) => round.kind).join(' '),
        String(result.ackedTotal),
        String(result.rounds.reduce((sum, round) => sum + round.lost.length, 0)),
        String(last?.stranded.length ?? 0),
        String(result.rounds.filter((round) => round.lost.length > 0 || round.stranded.length > 0).length),
      ];
    }),
  ]);
};
