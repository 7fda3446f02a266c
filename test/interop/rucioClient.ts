import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The stock Rucio 39 client, for the tests that run it (test/interop/, test/readme.test.ts).
 *
 * RUCIO_CLIENT_PYTHONPATH: a Python path under which `rucio.client` (Rucio 39, unmodified: what
 * `pip install rucio-clients` installs) and its dependencies import. RUCIO_CLIENT_PYTHON: the
 * interpreter (default `python3`). Unset, the tests that need the client skip with a reason.
 * It is run two ways: as it is, against a server with DMS_CLIENT_HEADERS=rucio, and as a copy
 * made at test time with every `X-Rucio-` renamed `X-Svc-` (`renamedClientPath`), against a server
 * in the default mode: the client a deployment without the rucio header mode needs.
 */
export const CLIENT_PYTHONPATH = process.env.RUCIO_CLIENT_PYTHONPATH || undefined;
export const CLIENT_PYTHON = process.env.RUCIO_CLIENT_PYTHON || 'python3';
export const SKIP_REASON =
  'RUCIO_CLIENT_PYTHONPATH is not set, so the Rucio Python client cannot be imported (README.md, "Tests")';

/** The entry of a Python path that holds the `rucio` package, or undefined. */
const packageRoot = (pythonPath: string): string | undefined =>
  pythonPath.split(delimiter).find((entry) => existsSync(join(entry, 'rucio', 'client', 'baseclient.py')));

/**
 * Checks that the client imports and is the stock one (its headers named X-Rucio-), so that a
 * misconfigured run fails with a sentence instead of fifty client errors.
 */
export const checkStockClient = (pythonPath: string): void => {
  const imported = spawnSync(CLIENT_PYTHON, ['-c', 'import rucio.client, rucio.client.uploadclient'], {
    env: { ...process.env, PYTHONPATH: pythonPath },
    encoding: 'utf8',
  });
  if (imported.status !== 0)
    throw new Error(`${CLIENT_PYTHON} cannot import rucio.client from RUCIO_CLIENT_PYTHONPATH:\n${imported.stderr}`);
  const root = packageRoot(pythonPath);
  if (!root) throw new Error(`no rucio/client/baseclient.py under RUCIO_CLIENT_PYTHONPATH=${pythonPath}`);
  if (!readFileSync(join(root, 'rucio', 'client', 'baseclient.py'), 'utf8').includes('X-Rucio-Auth-Token'))
    throw new Error(`RUCIO_CLIENT_PYTHONPATH must name the stock client (X-Rucio- headers); ${root} has them renamed`);
};

/**
 * A copy of the client's `rucio` package with every `X-Rucio-` (and `x-rucio-`) renamed `X-Svc-`,
 * in a temporary directory put first on the Python path; the dependencies still come from
 * RUCIO_CLIENT_PYTHONPATH. Returns the new Python path and a disposer.
 */
export const renamedClientPath = (pythonPath: string): { pythonPath: string; dispose(): void } => {
  const root = packageRoot(pythonPath)!;
  const temp = makeTempDir('rucio-renamed-');
  const target = join(temp.path, 'rucio');
  cpSync(join(root, 'rucio'), target, { recursive: true, filter: (source) => !source.endsWith('__pycache__') });
  const rename = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) rename(path);
      else if (entry.name.endsWith('.py')) {
        const text = readFileSync(path, 'utf8');
        const renamed = text.replaceAll('X-Rucio-', 'X-Svc-').replaceAll('x-rucio-', 'x-svc-');
        if (renamed !== text) writeFileSync(path, renamed);
      }
    }
  };
  rename(target);
  return { pythonPath: [temp.path, pythonPath].join(delimiter), dispose: temp.dispose };
};

/** The client's configuration, as README.md shows it, for a server at `url`. */
export const rucioConfig = (url: string, username: string, password: string): string =>
  `[client]\nrucio_host = ${url}\nauth_host = ${url}\nauth_type = userpass\n` +
  `username = ${username}\npassword = ${password}\naccount = root\nrequest_retries = 2\n`;

/**
 * A RUCIO_HOME with `etc/rucio.cfg`, and a `bin/rucio` that runs the client's command line (the
 * `rucio` that `pip install rucio-clients` puts on the PATH) with this Python and Python path.
 */
export const makeRucioHome = (config: string, pythonPath: string): { path: string; dispose(): void } => {
  const home = makeTempDir('rucio-home-');
  mkdirSync(join(home.path, 'etc'));
  writeFileSync(join(home.path, 'etc', 'rucio.cfg'), config);
  mkdirSync(join(home.path, 'bin'));
  const cli = join(home.path, 'bin', 'rucio');
  writeFileSync(
    cli,
    `#!/bin/sh\nPYTHONPATH=${shellQuote(pythonPath)} exec ${shellQuote(CLIENT_PYTHON)} -c ` +
      `'import sys; from rucio.cli.command import main; sys.exit(main(prog_name="rucio"))' "$@"\n`,
  );
  chmodSync(cli, 0o755);
  return home;
};

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

export type Run = { status: number | null; stdout: string; stderr: string };

/** Runs a command in a child process; servers live in the test's process, so never block it. */
export const run = async (
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<Run> => {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
};
