import Database from 'better-sqlite3';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { newEvent } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

const DMS = join(import.meta.dirname, '..', '..', 'bin', 'dms');

type Run = Readonly<{ status: number; stdout: string; stderr: string }>;

/**
 * `dms audit anchor` and `dms audit verify --anchor` as an operator runs them (issue 22): an
 * anchor kept elsewhere, then the newest event of a stream removed from the end of the log.
 */
describe('dms audit anchor and verify --anchor', function () {
  this.timeout(60_000);
  const dir = makeTempDir('dms-anchor-');
  const dataDir = join(dir.path, 'data');
  const anchorFile = join(dir.path, 'anchor.json');
  const keyFile = join(dir.path, 'anchor.key');
  after(() => dir.dispose());

  const dms = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        DMS,
        args,
        { env: { ...process.env, DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'warn' }, encoding: 'utf8' },
        (error, stdout, stderr) =>
          resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  before(async () => {
    mkdirSync(dataDir);
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    await store.appendToStream('account-jdoe', [newEvent('AccountCreated', { account: 'jdoe' })]);
    await store.appendToStream('scope-jdoe', [newEvent('ScopeAdded', { scope: 'user.jdoe' })]);
    await store.appendToStream('account-jdoe', [newEvent('AccountSessionsRevoked', {})]);
    await store.close();
    writeFileSync(keyFile, 'a4c1f07e9b2d4e6f8a0b1c2d3e4f5a6b\n');
  });

  it('writes a signed anchor that verify then holds to', async () => {
    const anchor = await dms('audit', 'anchor', anchorFile, '--key-file', keyFile);
    expect(anchor.status, anchor.stderr).to.equal(0);
    expect(anchor.stderr).to.match(/anchored the log chain at position 3 .*, signed in /);
    expect(JSON.parse(readFileSync(anchorFile, 'utf8'))).to.include({
      format: 'dms-log-anchor/1',
      log_chain: 'stored',
    });
    const verify = await dms('audit', 'verify', '--anchor', anchorFile, '--key-file', keyFile);
    expect(verify.status, verify.stdout + verify.stderr).to.equal(0);
    expect(verify.stdout).to.match(/every hash chain holds, and the anchor too/);
  });

  it('refuses a signed anchor without its key', async () => {
    const verify = await dms('audit', 'verify', '--anchor', anchorFile);
    expect(verify.status).to.equal(1);
    expect(verify.stderr).to.match(/The anchor is signed: give its key/);
  });

  it('names the cut tail once the last event of a stream is removed, and says the log alone cannot', async () => {
    const raw = new Database(join(dataDir, 'events.sqlite'));
    raw.exec("DELETE FROM events WHERE type = 'AccountSessionsRevoked'");
    raw.close();
    const [alone, verify, json] = await Promise.all([
      dms('audit', 'verify', '--json'),
      dms('audit', 'verify', '--anchor', anchorFile, '--key-file', keyFile),
      dms('audit', 'verify', '--json', '--anchor', anchorFile, '--key-file', keyFile),
    ]);
    expect(alone.status, alone.stderr).to.equal(0);
    expect(JSON.parse(alone.stdout)).to.include({ holds: true });
    expect(verify.status).to.equal(1);
    expect(verify.stdout).to.match(/^BROKEN: position 3: the log ends at position 2, .* were removed$/m);
    expect(json.status).to.equal(1);
    const summary = JSON.parse(json.stdout) as { holds: boolean; first_break: Record<string, unknown> };
    expect(summary.holds).to.equal(false);
    expect(summary.first_break).to.include({ stream: null, revision: null, position: 3, reason: 'cut-tail' });
  });
});
