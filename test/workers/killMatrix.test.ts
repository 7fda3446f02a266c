import { expect } from 'chai';
import { runKillMatrix, type KillMatrixResult } from '../../bench/lib/killMatrix/killMatrix.ts';
import { expectReadModelsEqualRebuild } from '../support/readModelRebuild.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The kill matrix in the suite (issue 34), a few small rounds of what `npm run bench crash` runs
 * long: eight writers of every kind, `kill -9` of each kind of process in turn, the process back,
 * then every write acknowledged so far read back at the first reads after the restart, and every
 * rule OK with a lock on each file of its DID and its posix copy identical to its source; at the
 * end the read models equal a rebuild from the events (issue 14's check, once after every kill).
 * The deadlines bound a hang on a busy machine; the rounds converge in seconds.
 */
const CONVERGENCE_MS = 180_000;

const expectConverged = (result: KillMatrixResult): void => {
  const report = result.rounds.map((round) => ({ kind: round.kind, lost: round.lost, stranded: round.stranded }));
  expect(result.rounds.length).to.be.above(0);
  for (const round of report) {
    expect(round.lost, `acknowledged writes not read back after kill -9 of the ${round.kind}`).to.deep.equal([]);
    expect(round.stranded, `work stranded after kill -9 of the ${round.kind}`).to.deep.equal([]);
  }
};

describe('Kill matrix: kill -9 of each kind of process under writes of every kind (issue 34)', function () {
  this.timeout(900_000);

  const run = async (deployment: 'serve' | 'split') => {
    const dir = makeTempDir(`dms-kill-${deployment}-`);
    let passed = false;
    try {
      const result = await runKillMatrix({
        deployment,
        runDir: dir.path,
        rounds: deployment === 'serve' ? 3 : 4,
        acksPerRound: 40,
        bigFiles: 60,
        convergenceMs: CONVERGENCE_MS,
        // A transfer caught SUBMITTING by the kill is retried after 10 s instead of a minute.
        settings: { 'conveyor-finisher': { local_submitting_timeout: 10 } },
        // The read models after all the kills equal what a projector makes from the events alone.
        afterwards: async (dataDir) => void (await expectReadModelsEqualRebuild(dataDir, 300_000)),
        log: (line) => console.log(`      ${line}`),
      });
      expectConverged(result);
      passed = true;
    } finally {
      // A failure keeps the logs of every process (*.log) for the post-mortem.
      if (passed) dir.dispose();
      else console.log(`      kept ${dir.path}`);
    }
  };

  it('dms serve with two API workers: the primary, an API worker and the private redis-server', () => run('serve'));

  it('the split deployment: the worker, the projector, redis-server and the API', () => run('split'));
});
