import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { uniqueName } from '../support/events.ts';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidcProvider.ts';
import { rabbitmqMissing, sharedBroker } from '../support/rabbitmq.ts';
import { makeTempDir } from '../support/tempDir.ts';
import {
  checkStockClient,
  CLIENT_PYTHON,
  CLIENT_PYTHONPATH,
  makeRucioHome,
  run,
  SKIP_REASON,
} from '../interop/rucioClient.ts';
import {
  codeBlocks,
  failedChecks,
  failedInOrder,
  pythonExpectations,
  shellScript,
  type Block,
} from './readmeBlocks.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * README.md's walk-throughs, run as a reader pastes them (test/readme/readmeBlocks.ts says how
 * their commented outputs are read and checked).
 *
 * The test plays the reader: it starts `dms serve` (what `npm start` runs) with its data under
 * `data/` of a fresh directory, links the repository's `bin/` there, and runs the ```sh blocks
 * in that directory, in order, in one bash, so `data/...` and `bin/dms` mean what they mean in
 * a checkout. The one rewrite: `localhost:8080` and `127.0.0.1:8080` become the test server's
 * port. Blocks that install or start things (`npm ci`, `npm start`, `npm test`, `pip install`)
 * are what the test does itself, and are not run; nor is the OpenID provider of "Logging in with
 * OpenID Connect" (test/support/oidcProviderDemo.ts), which runs until interrupted while the
 * reader goes on in another terminal (test/api/oidc.test.ts runs the same flows against it). The
 * test starts that provider itself, as the demo script does (its client `dms` may have tokens of
 * its own), and the server trusts it from the start: `/tmp/idpsecrets.json` becomes the test's
 * providers file, so the token transfers of "Multihop, tape and token transfers" run too.
 *
 * The section "Using the Rucio client" needs the stock client (RUCIO_CLIENT_PYTHONPATH, as the
 * interop test): its server is restarted on the same data with DMS_CLIENT_HEADERS=rucio, the
 * ```ini block becomes the RUCIO_CONFIG file, the ```python block runs, then its ```sh block with
 * a `rucio` command on the PATH. Without the client that part is skipped with the reason.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLIENT_SECTION = 'Using the Rucio client';
const BROKER_SECTION = 'Messages to a broker';

/** Why the broker section cannot run here (no RabbitMQ, or no stomp.py to read it back), or undefined. */
const brokerMissing = (): string | undefined =>
  rabbitmqMissing() ??
  (spawnSync('/usr/bin/python3', ['-c', 'import stomp']).status === 0
    ? undefined
    : 'stomp.py is not installed for /usr/bin/python3 (Debian: apt-get install python3-stomp; bin/ensure-rabbitmq.sh does it)');

const blocks = codeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
const runnable = (block: Block) =>
  block.language === 'sh' &&
  !/\b(npm (ci|start|test)|pip install|apt-get install|rabbitmq-plugins|oidcProviderDemo\.ts)\b/.test(block.code);
/** The test's server for localhost:8080, and its broker for RabbitMQ's STOMP port 61613. */
const withPort =
  (port: string, stompPort?: number, providersFile?: string) =>
  (code: string): string => {
    const served = code.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `$1:${port}`);
    const trusted = providersFile === undefined ? served : served.replaceAll('/tmp/idpsecrets.json', providersFile);
    return stompPort === undefined ? trusted : trusted.replace(/\b61613\b/g, String(stompPort));
  };

/** Runs sh blocks in one bash in `cwd`; fails the test with every check that did not hold. */
const runShell = async (
  shellBlocks: readonly Block[],
  port: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  stompPort?: number,
  providersFile?: string,
) => {
  const script = shellScript(shellBlocks, withPort(port, stompPort, providersFile));
  const result = await run('bash', ['-c', script.script], { cwd, env });
  const failures = failedChecks(result.stdout, script);
  const stopped =
    result.status === 0
      ? []
      : [
          `the blocks stopped with status ${result.status}; the end of what they printed:\n${result.stdout.slice(-3000)}`,
        ];
  expect([...stopped, ...failures], [...stopped, ...failures].join('\n\n')).to.deep.equal([]);
};

/** The shell's environment: this one, without the test run's own DMS_* settings. */
const readerEnvironment = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DMS_'))),
  ...extra,
});

describe('README.md walk-throughs, pasted whole', function () {
  this.timeout(240_000);

  it('has the blocks this test runs, and every walk-through checks what it shows', () => {
    const sections = new Set(blocks.filter(runnable).map((block) => block.section));
    expect([...sections]).to.include.members([
      'Trying it with curl',
      'Transfers between two directories',
      'Multihop, tape and token transfers',
      BROKER_SECTION,
      CLIENT_SECTION,
    ]);
    for (const block of blocks.filter(runnable)) {
      const { checks } = shellScript([block], (code) => code);
      expect(checks.flat().length, `README.md:${block.line} has no commented output`).to.be.above(0);
    }
    expect(blocks.filter((block) => block.language === 'python')).to.have.length(1);
    expect(blocks.filter((block) => block.language === 'ini')).to.have.length(1);
  });

  it('fails a block whose commands no longer print what its comments say, or that stops', async () => {
    const temp = makeTempDir('dms-readme-check-');
    try {
      const block = (code: string): Block => ({ language: 'sh', section: 'x', line: 1, code });
      const drifted = shellScript([block(`echo '{"state":"REPLICATING","locks":2}'\n# {"state":"OK",...}`)], String);
      const ran = await run('bash', ['-c', drifted.script], { cwd: temp.path });
      expect(failedChecks(ran.stdout, drifted)).to.have.length(1);
      const held = shellScript([block(`echo '{"state":"OK","locks":2}'\n# {"state":"OK",...}`)], String);
      expect(failedChecks((await run('bash', ['-c', held.script], { cwd: temp.path })).stdout, held)).to.deep.equal([]);
      const stopped = shellScript([block(`false\necho '{"state":"OK"}'\n# {"state":"OK"}`)], String);
      const stop = await run('bash', ['-c', stopped.script], { cwd: temp.path });
      expect(stop.status).to.equal(1);
      expect(failedChecks(stop.stdout, stopped)).to.have.length(1);
    } finally {
      temp.dispose();
    }
  });

  describe('against a fresh dms serve', () => {
    let temp: { path: string; dispose(): void };
    const environment = {
      PORT: '0',
      DMS_LOG_LEVEL: 'info',
      DMS_QUEUE_PREFIX: uniqueName('readme'),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    };
    let server: ServerProcess | undefined;
    let provider: TestOidcProvider | undefined;
    const start = async (extra: Record<string, string> = {}) => {
      await server?.stop();
      const data = { DMS_DATA_DIR: join(temp.path, 'data') };
      server = await startProcess('bin/dms.ts', ['serve'], { ...environment, ...data, ...extra }, 'API listening');
      return new URL(server.url).port;
    };
    before(() => {
      temp = makeTempDir('dms-readme-');
      symlinkSync(join(ROOT, 'bin'), join(temp.path, 'bin'));
    });
    after(async () => {
      await server?.stop();
      await provider?.stop();
      temp?.dispose();
    });

    /** The demo's OpenID provider (test/support/oidcProviderDemo.ts) and its providers file. */
    const demoProvider = async (): Promise<string> => {
      provider = await startTestOidcProvider();
      const redirectUris = ['http://127.0.0.1:8080/auth/oidc_code'];
      await provider.addClient({
        client_id: 'dms',
        client_secret: 'dms-demo-secret',
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types: ['code'],
      });
      const file = join(temp.path, 'idpsecrets.json');
      writeFileSync(
        file,
        JSON.stringify({
          demo: {
            issuer: provider.issuer,
            client_id: 'dms',
            client_secret: 'dms-demo-secret',
            redirect_uris: redirectUris,
          },
        }),
      );
      return file;
    };

    it('runs the curl, transfer and broker walk-throughs as they stand', async () => {
      const providersFile = await demoProvider();
      const port = await start({ DMS_OIDC_PROVIDERS: providersFile });
      // The broker section reads from the run's RabbitMQ, in place of the reader's on 61613.
      const missing = brokerMissing();
      if (missing) console.log(`      the section "${BROKER_SECTION}" is skipped: ${missing}`);
      const stompPort = missing ? undefined : (await sharedBroker()).stompPort;
      const walkThrough = blocks.filter(
        (block) =>
          runnable(block) &&
          block.section !== CLIENT_SECTION &&
          (stompPort !== undefined || block.section !== BROKER_SECTION),
      );
      await runShell(walkThrough, port, temp.path, readerEnvironment(), stompPort, providersFile);
    });

    it('runs the Rucio client section with the stock client, against DMS_CLIENT_HEADERS=rucio', async function () {
      if (!CLIENT_PYTHONPATH) {
        skipBecause(this, SKIP_REASON);
      }
      checkStockClient(CLIENT_PYTHONPATH);
      const port = await start({ DMS_CLIENT_HEADERS: 'rucio' });
      const config = join(temp.path, 'rucio.cfg');
      const ini = blocks.find((block) => block.language === 'ini')!;
      writeFileSync(config, withPort(port)(ini.code));
      const home = makeRucioHome(readFileSync(config, 'utf8'), CLIENT_PYTHONPATH);
      try {
        const env = readerEnvironment({
          RUCIO_CONFIG: config,
          PYTHONPATH: CLIENT_PYTHONPATH,
          PATH: `${join(home.path, 'bin')}:${process.env.PATH}`,
        });
        const python = blocks.find((block) => block.language === 'python')!;
        const ran = await run(CLIENT_PYTHON, ['-c', python.code], { cwd: temp.path, env });
        expect(ran.status, `${ran.stdout}\n${ran.stderr}`).to.equal(0);
        const failures = failedInOrder(ran.stdout, pythonExpectations(python));
        expect(failures, failures.join('\n')).to.deep.equal([]);
        const cli = blocks.filter((block) => runnable(block) && block.section === CLIENT_SECTION);
        await runShell(cli, port, temp.path, env);
      } finally {
        home.dispose();
      }
    });
  });
});
