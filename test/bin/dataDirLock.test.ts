import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { startRuntime } from '../../bin/runtime.ts';
import { DataDirInUseError, isDataDirLocked, lockDataDir } from '../../infra/dataDirLock.ts';
import { findRedisUrl } from '../../infra/queue/redisUrlFile.ts';
import { silentLogger } from '../../infra/logger.ts';
import { eventually } from '../support/eventually.ts';
import { request } from '../support/http.ts';
import { expectStatus, startTestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { freeLoopbackPort } from '../../infra/freePort.ts';

const DMS = join(import.meta.dirname, '..', '..', 'bin', 'dms');

/** `bin/dms <args>` in a process of its own: exit status and output; never rejects. */
const dms = (args: readonly string[], environment: NodeJS.ProcessEnv) =>
  new Promise<{ status: number; stderr: string }>((resolve) => {
    execFile(DMS, [...args], { env: { ...process.env, ...environment }, encoding: 'utf8' }, (error, _stdout, stderr) =>
      resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });

/**
 * Issue 22: one writer per data directory. `dms serve`, `dms projector` and a `dms worker` with a
 * private Redis lock the directory before they open anything; a second one is refused at once,
 * naming the first; the kernel lets the lock go when its holder dies.
 */
describe('One writer per data directory', function () {
  this.timeout(90_000);

  it('refuses a second holder, naming the first, and lets the next in once the first lets go', () => {
    const dir = makeTempDir();
    try {
      const first = lockDataDir(dir.path, 'projector-audit', 'dms serve');
      first.describe('http://127.0.0.1:8080');
      expect(isDataDirLocked(dir.path, 'projector-audit')).to.equal(true);
      expect(() => lockDataDir(dir.path, 'projector-audit', 'dms projector'))
        .to.throw(DataDirInUseError)
        .with.property('message')
        .that.matches(new RegExp(`\`dms serve\` \\(pid ${process.pid} on .*, API http://127.0.0.1:8080, started .*\\)`))
        .and.matches(/another DMS_DATA_DIR/);
      // The other lock of the directory is free.
      lockDataDir(dir.path, 'redis', 'dms worker').release();
      first.release();
      expect(isDataDirLocked(dir.path, 'projector-audit')).to.equal(false);
      lockDataDir(dir.path, 'projector-audit', 'dms projector').release();
    } finally {
      dir.dispose();
    }
  });

  it('refuses a second projector beside `dms serve`, and lets `dms api` processes share the directory', async () => {
    const server = await startTestServer();
    try {
      const { config } = server.runtime.services;
      let refused: unknown;
      await startRuntime(config, { api: false, projector: true, workers: false }, silentLogger()).catch(
        (error: unknown) => (refused = error),
      );
      expect(refused).to.be.instanceOf(DataDirInUseError);
      const api = await startRuntime(
        { ...config, port: 0 },
        { api: true, projector: false, workers: false },
        silentLogger(),
      );
      try {
        expectStatus(await request(api.url!, 'GET', '/ping'), 200);
      } finally {
        await api.stop();
      }
    } finally {
      await server.stop();
    }
  });

  it('makes a second `npm start` on the same data directory exit at once with a clear message, the first working on', async () => {
    const dir = makeTempDir();
    // As `npm start` runs: every role, a private redis-server, a fixed port.
    const environment = { DMS_DATA_DIR: dir.path, PORT: String(await freeLoopbackPort()), REDIS_URL: undefined };
    let first: ServerProcess | undefined;
    try {
      first = await startProcess('bin/dms.ts', ['serve'], environment, 'API listening');
      const second = await dms(['serve'], environment);
      expect(second.status).to.equal(2);
      expect(second.stderr).to.match(new RegExp(`in use: \`dms serve\` \\(pid ${first.pid} on .*, API ${first.url}`));
      expect(second.stderr).to.not.match(/EADDRINUSE|at .*\.ts:\d+/);
      expectStatus(await request(first.url, 'GET', '/ping'), 200);
      // The first's private Redis is still the one the data directory names.
      expect((await dms(['workers', 'status', '--json'], environment)).status).to.equal(0);

      // Killed without a chance to let go, it holds nothing: the next start gets the directory.
      process.kill(first.pid, 'SIGKILL');
      first = undefined;
      // The kernel lets its locks go as the process dies.
      await eventually(
        () => !isDataDirLocked(dir.path, 'projector-audit') && !isDataDirLocked(dir.path, 'redis'),
        10_000,
        'the killed process gone',
      );
      expect(isDataDirLocked(dir.path, 'projector-audit')).to.equal(false);
      // Its `redis/url` is left behind, naming a Redis that died with it: no command uses it.
      expect(existsSync(join(dir.path, 'redis', 'url'))).to.equal(true);
      expect(findRedisUrl(undefined, dir.path)).to.equal(undefined);
      first = await startProcess('bin/dms.ts', ['serve'], environment, 'API listening');
      expectStatus(await request(first.url, 'GET', '/ping'), 200);
      await first.stop();
      first = undefined;
      expect(existsSync(join(dir.path, 'redis', 'url'))).to.equal(false);
    } finally {
      if (first) await first.stop();
      dir.dispose();
    }
  });
});
