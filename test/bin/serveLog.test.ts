import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { dmsCommand } from '../../bench/lib/dmsCommand.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';

// The terminal's colour codes (ESC [ n m).
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g');

/** A `dms` service command in a process of its own, its output gathered; `terminal`: on a terminal of its own. */
const service = (args: readonly string[], environment: NodeJS.ProcessEnv, terminal = false) => {
  const dms = dmsCommand();
  const command = [dms.command, ...dms.args, ...args];
  // script(1) gives the command a terminal of its own; its output reaches us through script's.
  const child: ChildProcess = terminal
    ? spawn('script', ['-qfec', command.map((part) => `'${part}'`).join(' '), '/dev/null'], {
        env: { ...process.env, ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(command[0]!, command.slice(1), {
        env: { ...process.env, ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  let output = '';
  // Colours are for terminals: the lines are compared without them.
  const gather = (chunk: Buffer) => (output += chunk.toString().replaceAll(COLOUR, '').replaceAll('\r', ''));
  child.stdout!.on('data', gather);
  child.stderr!.on('data', gather);
  return {
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
};

const LISTENING =
  /^\d\d:\d\d:\d\d\.\d{3} INFO {2}dms \d+\.\d+\.\d+\S* listening on http:\/\/127\.0\.0\.1:\d+ — console at \/console, metrics at \/metrics/m;

/**
 * Issue 28: a log for people on a terminal, JSON lines for machines. A service started on a
 * terminal (or with DMS_LOG_FORMAT=pretty) says in one line where it listens, and logs readable
 * lines; otherwise it logs JSON lines.
 */
describe('The service log for people and for machines', function () {
  this.timeout(120_000);
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const base = (dataDir: string): NodeJS.ProcessEnv => ({
    DMS_DATA_DIR: dataDir,
    PORT: '0',
    DMS_LOG_LEVEL: 'info',
    DMS_QUEUE_PREFIX: uniqueName('log'),
  });

  it('says where the API, the console and the metrics are when `dms serve` starts on a terminal', async () => {
    const dir = makeTempDir();
    stops.push(async () => dir.dispose());
    const environment: NodeJS.ProcessEnv = { ...base(dir.path), DMS_WORKERS: 'false', DMS_API_WORKERS: '1' };
    delete environment.DMS_LOG_FORMAT;
    const serve = service(['serve'], environment, true);
    stops.unshift(serve.stop);
    await eventually(() => LISTENING.test(serve.output()), 60_000, 'the listening line');
    expect(serve.output()).not.to.match(/^\{"level"/m);
  });

  it('logs JSON lines when its output is not a terminal, whatever else it is', async () => {
    const dir = makeTempDir();
    stops.push(async () => dir.dispose());
    const environment: NodeJS.ProcessEnv = { ...base(dir.path), DMS_WORKERS: 'false', DMS_API_WORKERS: '1' };
    delete environment.DMS_LOG_FORMAT;
    const serve = service(['serve'], environment);
    stops.unshift(serve.stop);
    await eventually(() => serve.output().includes('"msg":"API listening"'), 60_000, 'the JSON listening line');
    const listening = serve
      .output()
      .split('\n')
      .map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : {}))
      .find((entry) => entry.msg === 'API listening')!;
    expect(listening).to.include({ console: '/console', metrics: '/metrics' });
    expect(listening.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listening.phasesMs).to.have.keys(['loading', 'stores', 'projections', 'root', 'listening', 'total']);
  });

  it('logs readable lines from `dms projector`, `dms api` and `dms worker` with DMS_LOG_FORMAT=pretty', async () => {
    const dir = makeTempDir();
    stops.push(async () => dir.dispose());
    const environment = { ...base(dir.path), DMS_LOG_FORMAT: 'pretty', REDIS_URL: process.env.REDIS_URL! };
    const projector = service(['projector'], environment);
    stops.unshift(projector.stop);
    await eventually(() => / INFO {2}projections running /.test(projector.output()), 60_000, 'the projector running');
    const api = service(['api'], environment);
    stops.unshift(api.stop);
    await eventually(() => LISTENING.test(api.output()), 60_000, 'the API listening');
    const worker = service(['worker', '--roles', 'kronos'], environment);
    stops.unshift(worker.stop);
    await eventually(
      () => / INFO {2}daemon roles running roles=\["kronos"\]/.test(worker.output()),
      60_000,
      'the worker',
    );
    for (const output of [projector.output(), api.output(), worker.output()])
      expect(output).not.to.match(/^\{"level"/m);
  });
});
