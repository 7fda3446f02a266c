import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { startPrivateRedisServer, type PrivateRedisServer } from '../../infra/queue/redisServer.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** The redis-server listening on `port` (its command line is its title, `redis-server 127.0.0.1:<port>`). */
const redisServerOn = (port: number): number | undefined => {
  const found = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`redis-server 127.0.0.1:${port}`);
      } catch {
        return false;
      }
    });
  return found === undefined ? undefined : Number(found);
};

const exists = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The private redis-server of `dms serve` (infra/queue/redisServer.ts), supervised: killed with
 * SIGKILL, it is started again on the same port from its append-only file (issue 34).
 */
describe('The private redis-server, supervised', function () {
  this.timeout(30_000);
  const dir = makeTempDir('dms-redis-');
  let server: PrivateRedisServer | undefined;
  after(async () => {
    await server?.stop();
    dir.dispose();
  });

  it('comes back on its port with what its file held after a kill -9, and says so', async () => {
    const told: string[] = [];
    server = await startPrivateRedisServer({
      persistenceDir: dir.path,
      supervise: {
        onExit: ({ signal }) => told.push(`exit ${signal}`),
        onRestart: () => told.push('restarted'),
        onRestartFailed: () => told.push('failed'),
      },
    });
    const client = new Redis(server.url, { maxRetriesPerRequest: null });
    try {
      await client.set('kept', 'yes');
      // What the append-only file holds once written (a second's fsync at most), as after any write.
      await eventually(
        () => readdirSync(`${dir.path}/appendonlydir`).some((file) => file.endsWith('.incr.aof')),
        5000,
        'the append-only file',
      );
      const killed = redisServerOn(server.port)!;
      expect(killed).to.be.above(0);
      process.kill(killed, 'SIGKILL');
      await eventually(() => told.includes('restarted'), 20_000, 'the server started again');
      expect(told[0]).to.equal('exit null');
      expect(exists(killed)).to.equal(false);
      expect(await client.get('kept')).to.equal('yes');
    } finally {
      client.disconnect();
    }
    const { port } = server;
    await server.stop();
    server = undefined;
    await eventually(() => redisServerOn(port) === undefined, 10_000, 'no redis-server left once stopped');
  });
});
