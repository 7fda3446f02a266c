import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { allProjections } from '../../projections/index.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';

/**
 * A projection group's thread writes its read-model file in long transactions back to back (a
 * rebuild's batches), while API processes write small things into the same file (rebuild
 * requests). SQLite lets one writer in at a time: the API must get its turn between the group's
 * transactions, and when it cannot get one in time answer Rucio's 503 with a retry hint, never a
 * 500. The other writer here is a process of its own (test/fixtures/readStoreWriter.ts).
 */
describe('API: writes into a read-model file another writer keeps busy', function () {
  this.timeout(90_000);
  let server: TestServer;
  const writers: ChildProcess[] = [];

  /** Starts the other writer on a group's file and resolves once it holds the lock. */
  const otherWriter = (group: string, transactionMs: number, forMs: number): Promise<ChildProcess> => {
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'readStoreWriter.ts');
    const path = join(server.dataDir, `readmodels-${group}.sqlite`);
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, path, String(transactionMs), String(forMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    writers.push(child);
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('writing')) resolve(child);
      });
      child.on('exit', (code) => reject(new Error(`the other writer ended (${code}) before writing`)));
    });
  };
  const finished = (child: ChildProcess): Promise<void> =>
    child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.on('exit', () => resolve()));

  // A server each: a rebuild the first asked for may still be under way in the second, and a
  // request for one under way writes nothing, so it would not meet the lock.
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const child of writers.splice(0)) child.kill();
    await server.stop();
  });

  it('answers every one of many rebuild requests sent at once while a group writes back to back', async () => {
    const writer = await otherWriter('dids', 300, 12_000);
    const answers = await Promise.all(
      allProjections.map(({ name }) => server.root('POST', `/admin/projections/${name}/rebuild`)),
    );
    const statuses = answers.map((answer, index) => `${allProjections[index]!.name} ${answer.status}`);
    expect(statuses.filter((status) => !status.endsWith(' 202'))).to.deep.equal([]);
    writer.kill();
    await finished(writer);
  });

  it('answers 503 ResourceTemporaryUnavailable with Retry-After when the file stays locked, and takes the retry', async () => {
    const writer = await otherWriter('rules', 8_000, 8_000);
    const busy = await server.root('POST', '/admin/projections/rules/rebuild');
    expectError(busy, 503, 'ResourceTemporaryUnavailable');
    expect(Number(busy.headers['retry-after'])).to.be.greaterThan(0);
    await finished(writer);
    expectStatus(await server.root('POST', '/admin/projections/rules/rebuild'), 202);
  });
});
