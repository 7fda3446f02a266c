import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runDms } from '../../bin/cli.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { uniqueName } from '../support/events.ts';

const DMS = join(import.meta.dirname, '..', '..', 'bin', 'dms');

type Run = Readonly<{ status: number; stdout: string; stderr: string }>;

/** `bin/dms <args>` as an operator runs it, in a process of its own; never rejects. */
const dms = (args: readonly string[], environment: NodeJS.ProcessEnv = {}, command = DMS): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { env: { ...process.env, ...environment }, encoding: 'utf8' },
      (error, stdout, stderr) => {
        resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });

/** The command line run in this process (help and usage errors only: they never reach an action). */
const inProcess = async (args: readonly string[]): Promise<Run> => {
  let stdout = '';
  let stderr = '';
  const status = await runDms(args, { writeOut: (text) => (stdout += text), writeErr: (text) => (stderr += text) });
  return { status: status === 'running' ? -1 : status, stdout, stderr };
};

/** Every command and subcommand the command line has. */
const COMMANDS = [
  ['serve'],
  ['api'],
  ['projector'],
  ['worker'],
  ['workers'],
  ['workers', 'status'],
  ['transfers'],
  ['transfers', 'status'],
  ['transfers', 'path'],
  ['projections'],
  ['projections', 'status'],
  ['projections', 'rebuild'],
  ['replay'],
  ['audit'],
  ['audit', 'verify'],
  ['audit', 'anchor'],
  ['events'],
  ['events', 'export'],
  ['events', 'import'],
  ['auth'],
  ['auth', 'issuers'],
  ['admin'],
  ['admin', 'bootstrap'],
  ['admin', 'revoke-tokens'],
  ['wait'],
  ['wait', 'rule'],
] as const;

describe('The dms command line', function () {
  this.timeout(60_000);

  it('lists every command with --help and exits 0, whatever the environment holds', async () => {
    const [help, subcommand] = await Promise.all([
      dms(['--help'], { PORT: 'eighty' }),
      dms(['projections', 'rebuild', '--help']),
    ]);
    expect(subcommand.status, subcommand.stderr).to.equal(0);
    expect(subcommand.stdout).to.match(/^Usage: dms projections rebuild \[options\] <name>/);
    expect(help.status, help.stderr).to.equal(0);
    expect(help.stdout).to.match(/^Usage: dms <command> \[options\]/);
    for (const command of [
      'serve',
      'api',
      'projector',
      'worker',
      'workers',
      'transfers',
      'projections',
      'replay',
      'audit',
      'events',
      'auth',
      'admin',
    ]) {
      expect(help.stdout).to.match(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const word = await inProcess(['help']);
    expect(word.status).to.equal(0);
    expect(word.stdout).to.equal(help.stdout);
  });

  it('gives every command and subcommand its own --help', async () => {
    const runs: Run[] = [];
    for (const command of COMMANDS) runs.push(await inProcess([...command, '--help']));
    for (const [index, run] of runs.entries()) {
      const command = COMMANDS[index]!.join(' ');
      expect(run.status, `${command}: ${run.stderr}`).to.equal(0);
      expect(run.stdout, command).to.include(`Usage: dms ${command}`);
    }
    const rebuild = runs[COMMANDS.findIndex((command) => command.join(' ') === 'projections rebuild')]!;
    expect(rebuild.stdout).to.include('<name>').and.to.include('--detach');
    const status = runs[COMMANDS.findIndex((command) => command.join(' ') === 'projections status')]!;
    expect(status.stdout).to.include('--json');
  });

  it('refuses an unknown command, a missing argument or a bad option value with exit status 2 and a message', async () => {
    const [unknown, badEnvironment] = await Promise.all([
      dms(['frobnicate']),
      dms(['projections', 'status'], { PORT: 'eighty' }),
    ]);
    const nothing = await inProcess([]);
    const missing = await inProcess(['projections', 'rebuild']);
    const badRevision = await inProcess(['replay', 'account-root', '--from', 'first']);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.match(/unknown command 'frobnicate'/);
    expect(nothing.status).to.equal(2);
    expect(nothing.stderr).to.match(/Usage: dms/);
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.match(/missing required argument 'name'/);
    expect(badRevision.status).to.equal(2);
    expect(badRevision.stderr).to.match(/--from/);
    expect(badEnvironment.status).to.equal(2);
    expect(badEnvironment.stderr).to.match(/PORT="eighty"/);
  });

  it('runs through a symlink, a chain of relative ones, and as an npm bin link to the package', async () => {
    const temp = makeTempDir('dms-links-');
    try {
      symlinkSync(DMS, join(temp.path, 'dms'));
      symlinkSync('dms', join(temp.path, 'relative'));
      // What `npm install <this package>` makes: node_modules/dms -> the package, .bin/dms -> ../dms/bin/dms.
      mkdirSync(join(temp.path, 'node_modules', '.bin'), { recursive: true });
      symlinkSync(join(import.meta.dirname, '..', '..'), join(temp.path, 'node_modules', 'dms'));
      symlinkSync(join('..', 'dms', 'bin', 'dms'), join(temp.path, 'node_modules', '.bin', 'dms'));
      const links = ['dms', 'relative', join('node_modules', '.bin', 'dms')];
      const runs = await Promise.all(links.map((link) => dms(['--help'], {}, join(temp.path, link))));
      for (const [index, run] of runs.entries()) {
        expect(run.status, `${links[index]}: ${run.stderr}`).to.equal(0);
        expect(run.stdout, links[index]).to.match(/^Usage: dms <command> \[options\]/);
      }
    } finally {
      temp.dispose();
    }
  });

  describe('beside a running service', () => {
    let server: TestServer;
    let account: string;
    const beside = (...args: string[]) => dms(args, { DMS_DATA_DIR: server.dataDir });
    before(async () => {
      server = await startTestServer();
      ({ account } = await server.createUser());
      expectStatus(await server.root('PUT', `/accounts/${account}`, { body: { email: 'cli@example.org' } }), 200);
    });
    after(async () => server?.stop());

    it('prints projections status --json as one JSON document: every projection caught up, the projector alive', async () => {
      const run = await beside('projections', 'status', '--json');
      expect(run.status, run.stderr).to.equal(0);
      const status = JSON.parse(run.stdout) as {
        projections: { name: string; lag: number; checkpoint: number; head: number; status: string }[];
        projectors: string[];
      };
      expect(status.projections.map((projection) => projection.name)).to.include.members([
        'accounts',
        'identities',
        'audit_index',
      ]);
      for (const projection of status.projections) {
        expect(projection, projection.name).to.include({ lag: 0, status: 'running' });
        expect(projection.checkpoint).to.equal(projection.head);
      }
      expect(status.projectors).to.have.length(1);
    });

    it('waits for a rule to be in a state, and gives up naming the state it is in', async () => {
      const scope = uniqueName('wait.');
      const rse = uniqueName('WAIT_').toUpperCase();
      expectStatus(await server.root('POST', `/accounts/root/scopes/${scope}`), 201);
      expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
      const file = { scope, name: 'f1', bytes: 1, adler32: '00000001' };
      expectStatus(await server.root('POST', '/replicas', { body: { rse, files: [file] } }), 201);
      const added = expectStatus(
        await server.root('POST', '/rules/', {
          body: { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: rse },
        }),
        201,
      );
      const [ruleId] = added.json<string[]>();
      const [ok, json, stuck] = await Promise.all([
        beside('wait', 'rule', ruleId!, 'OK'),
        beside('wait', 'rule', ruleId!, 'OK', '--json'),
        beside('wait', 'rule', ruleId!, 'STUCK', '--timeout', '0.3'),
      ]);
      expect(ok.status, ok.stderr).to.equal(0);
      expect(ok.stdout).to.match(new RegExp(`^rule ${ruleId} OK \\(locks OK 1, replicating 0, stuck 0\\) after `));
      expect(json.status, json.stderr).to.equal(0);
      expect(JSON.parse(json.stdout)).to.include({ id: ruleId, state: 'OK', locks_ok_cnt: 1, rse_expression: rse });
      expect(stuck.status).to.equal(1);
      expect(stuck.stderr).to.match(new RegExp(`rule ${ruleId} is not STUCK after 0\\.\\d s: OK \\(locks OK 1`));
    });

    it('prints the path the conveyor takes between two RSEs, through a multihop RSE, and says why there is none', async () => {
      const [source, hop, dest] = ['SRC_', 'HOP_', 'DST_'].map((prefix) => uniqueName(prefix).toUpperCase());
      for (const rse of [source!, hop!, dest!]) {
        expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
        expectStatus(
          await server.root('POST', `/rses/${rse}/protocols/root`, {
            body: {
              hostname: `${rse.toLowerCase()}.example.org`,
              port: 1094,
              prefix: '/data',
              impl: 'rucio.rse.protocols.xrootd.Default',
              domains: { wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 } },
            },
          }),
          201,
        );
      }
      expectStatus(
        await server.root('POST', `/rses/${hop}/attr/available_for_multihop`, { body: { value: true } }),
        201,
      );
      for (const [from, to] of [
        [source, hop],
        [hop, dest],
      ])
        expectStatus(await server.root('POST', `/rses/${from}/distances/${to}`, { body: { distance: 2 } }), 201);
      const [found, none] = await Promise.all([
        beside('transfers', 'path', source!, dest!, '--wide'),
        beside('transfers', 'path', dest!, source!),
      ]);
      expect(found.status, found.stderr).to.equal(0);
      expect(found.stdout.split('\n')[0]).to.equal(`${source} -> ${hop} -> ${dest} (cost 14)`);
      expect(found.stdout).to.match(new RegExp(`${hop} -> ${dest} +2 +root -> root +mock +no +no`));
      expect(none.status).to.equal(1);
      expect(none.stdout).to.match(/^no path: no path from .* even through the multihop RSEs/);
    });

    it('fits workers status in 100 columns when not on a terminal, and prints it whole with --wide', async () => {
      const environment = {
        REDIS_URL: process.env.REDIS_URL,
        DMS_QUEUE_PREFIX: server.runtime.services.config.queuePrefix,
      };
      const [fitted, wide] = await Promise.all([
        dms(['workers', 'status'], { DMS_DATA_DIR: server.dataDir, ...environment }),
        dms(['workers', 'status', '--wide'], { DMS_DATA_DIR: server.dataDir, ...environment }),
      ]);
      expect(fitted.status, fitted.stderr).to.equal(0);
      const lines = fitted.stdout.trimEnd().split('\n');
      expect(lines[0]).to.match(/^role +trigger +wait +act +delay +fail +done +last run +did +skip$/);
      for (const line of lines) expect(line.length, line).to.be.at.most(100);
      // Wrapped, not cut: the fitted table has every character of the wide one.
      expect(wide.status, wide.stderr).to.equal(0);
      const characters = (text: string) => [...text.replace(/\s+/g, '')].sort().join('');
      expect(characters(fitted.stdout)).to.equal(characters(wide.stdout));
      expect(Math.max(...wide.stdout.split('\n').map((line) => line.length))).to.be.above(100);
    });

    it('prints audit verify --json and replay --json for scripts', async () => {
      const [verify, replay, lines] = await Promise.all([
        beside('audit', 'verify', '--json'),
        beside('replay', `account-${account}`, '--json'),
        beside('replay', `account-${account}`, '--from', '1'),
      ]);
      expect(verify.status, verify.stderr).to.equal(0);
      const summary = JSON.parse(verify.stdout) as { holds: boolean; events: number; first_break: unknown };
      expect(summary.holds).to.equal(true);
      expect(summary.events).to.be.above(0);
      expect(summary.first_break).to.equal(null);
      expect(replay.status, replay.stderr).to.equal(0);
      const history = JSON.parse(replay.stdout) as { stream: string; events: { type: string; revision: number }[] };
      expect(history.stream).to.equal(`account-${account}`);
      expect(history.events.map((event) => event.type)).to.deep.equal(['AccountCreated', 'AccountEmailChanged']);
      expect(lines.status, lines.stderr).to.equal(0);
      expect(
        lines.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { revision: number }).revision),
      ).to.deep.equal([1]);
    });
  });
});
