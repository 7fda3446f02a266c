import { runAimsBenchmark } from './aims.ts';
import { runAppendRates } from './appendRates.ts';
import { runCrashBenchmark } from './crash.ts';
import { runDeletionBenchmark } from './deletion.ts';
import { runFootprintBenchmark } from './footprint.ts';
import { runGranularityBenchmark } from './granularity.ts';
import { runHttpOverhead } from './httpOverhead.ts';
import { runMultiProcessBenchmark } from './multiProcess.ts';
import { runPosixCopies } from './posixCopies.ts';
import { runRebuildBenchmark } from './rebuild.ts';
import { runReplicaBenchmark } from './replicas.ts';
import { runRuleBenchmark } from './rules.ts';
import { runScaleBenchmark } from './scale.ts';
import { runSoak } from './soak.ts';
import { runStartupBenchmark } from './startup.ts';
import { runSubscriptionBenchmark } from './subscriptions.ts';
import { runTransferBenchmark } from './transfers.ts';

/**
 * `npm run bench [name...]`: runs the benchmarks and prints their figures, each beside a
 * baseline measured in the same run. Figures depend on the machine; they are never test thresholds.
 */
const benchmarks: Record<string, () => Promise<void>> = {
  aims: runAimsBenchmark,
  appends: runAppendRates,
  crash: runCrashBenchmark,
  deletion: runDeletionBenchmark,
  footprint: runFootprintBenchmark,
  granularity: runGranularityBenchmark,
  http: runHttpOverhead,
  multiprocess: runMultiProcessBenchmark,
  copies: runPosixCopies,
  rebuild: runRebuildBenchmark,
  replicas: runReplicaBenchmark,
  rules: runRuleBenchmark,
  scale: runScaleBenchmark,
  soak: runSoak,
  startup: runStartupBenchmark,
  subscriptions: runSubscriptionBenchmark,
  transfers: runTransferBenchmark,
};

// Names come first; options after them (`npm run bench scale -- --files 100000`) are the benchmarks' own.
const firstOption = process.argv.findIndex((arg, index) => index >= 2 && arg.startsWith('-'));
const chosen = process.argv.slice(2, firstOption === -1 ? undefined : firstOption);
// The soak (ten minutes), the aims (the other benchmarks' flows again, side by side), the
// scale run (a million files) and the kill matrix's long run only when named.
const onlyNamed = new Set(['soak', 'aims', 'scale', 'crash']);
for (const name of chosen.length > 0 ? chosen : Object.keys(benchmarks).filter((name) => !onlyNamed.has(name))) {
  const benchmark = benchmarks[name];
  if (!benchmark) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benchmarks).join(', ')}`);
    process.exit(2);
  }
  await benchmark();
}
