import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { makeTempDir } from './tempDir.ts';
import { freeLoopbackPort } from '../../infra/freePort.ts';

/**
 * A real RabbitMQ with its STOMP plugin, for the tests of message delivery: Debian's
 * rabbitmq-server started as a child of the test run, on free loopback ports (AMQP, STOMP, the
 * Erlang distribution port and a port-mapper daemon of its own, so it never meets another Erlang
 * node of this machine), with its plugins, configuration, database and logs in a temporary
 * directory. It starts once per run, when a suite first asks for it (about 5 s), and stops with
 * the run (rootHooks.ts). `restart` stops it and starts it again on the same ports and data:
 * durable queues and persistent messages survive, as they would in production.
 */
export type TestBroker = Readonly<{
  host: string;
  stompPort: number;
  /**
   * Accounts the broker knows besides guest (the default user of logins without one, on `/`):
   * `hermes` (for the service) and `reader` (for the tests' consumers), on both virtual hosts.
   */
  users: Readonly<Record<'hermes' | 'reader', Readonly<{ login: string; passcode: string }>>>;
  /** A virtual host besides `/`, which only the two users may use. */
  vhost: string;
  /**
   * A STOMP+TLS listener that takes client certificates as logins (the certificate's CN is the
   * user, as for Rucio's hermes with `use_ssl`), with the files a client needs: the authority
   * that signed both sides, and `hermes`'s certificate and key. Absent without `openssl`.
   */
  tls?: Readonly<{ port: number; caFile: string; certFile: string; keyFile: string }>;
  /** Stops the broker, keeping its data: `start` brings it back on the same ports. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}>;

/** The directory of Debian's scripts: run directly, since /usr/sbin's wrapper switches to the rabbitmq user. */
const RABBITMQ_BIN = '/usr/lib/rabbitmq/bin';

/** Why no broker can be started here, or undefined when it can. */
export const rabbitmqMissing = (): string | undefined => {
  if (!existsSync(join(RABBITMQ_BIN, 'rabbitmq-server')))
    return 'rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server; bin/ensure-rabbitmq.sh does it before npm test)';
  if (spawnSync('epmd', ['-help']).error) return 'epmd (Erlang) is not on the PATH';
  return undefined;
};

/** RabbitMQ's default account, on `/`, which a fresh Debian broker has: the README's walk-through uses it. */
const GUEST = { login: 'guest', passcode: 'guest' };

let shared: Promise<TestBroker> | undefined;

/** The run's broker, started on first use. */
export const sharedBroker = (): Promise<TestBroker> => (shared ??= startBroker());

/** Stops the run's broker if a suite started it (the root hooks' afterAll). */
export const stopSharedBroker = async (): Promise<void> => {
  if (!shared) return;
  const broker = await shared.catch(() => undefined);
  shared = undefined;
  await broker?.dispose();
};

/** RabbitMQ's default password hash: base64 of a 4-byte salt and SHA-256(salt + password). */
const passwordHash = (password: string): string => {
  const salt = randomBytes(4);
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest();
  return Buffer.concat([salt, digest]).toString('base64');
};

/**
 * An authority, a server certificate for 127.0.0.1 and a client certificate whose CN is `client`,
 * made with openssl in `dir`; undefined when openssl is not there.
 */
const makeCertificates = (dir: string, client: string) => {
  const openssl = (...args: string[]) => spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (openssl('version').error) return undefined;
  const steps: string[][] = [
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=dms-test-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    ],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr'],
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    ],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${client}`, '-keyout', 'client.key', '-out', 'client.csr'],
    [
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      'client.pem',
    ],
  ];
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName = IP:127.0.0.1, DNS:localhost\n');
  for (const step of steps) {
    const made = openssl(...step);
    if (made.status !== 0) throw new Error(`openssl ${step[0]} failed: ${made.stderr}`);
  }
  return {
    ca: join(dir, 'ca.pem'),
    server: { cert: join(dir, 'server.pem'), key: join(dir, 'server.key') },
    client: { cert: join(dir, 'client.pem'), key: join(dir, 'client.key') },
  };
};

const startBroker = async (): Promise<TestBroker> => {
  const missing = rabbitmqMissing();
  if (missing) throw new Error(missing);
  const dir = makeTempDir('dms-rabbitmq-');
  const [amqpPort, stompPort, distPort, epmdPort] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  const users = {
    hermes: { login: 'dms-hermes', passcode: `pw-${randomBytes(6).toString('hex')}` },
    reader: { login: 'dms-reader', passcode: `pw-${randomBytes(6).toString('hex')}` },
  };
  const vhost = 'dms-tests';
  const certificates = makeCertificates(dir.path, users.hermes.login);
  const tlsPort = await freeLoopbackPort();
  writeFileSync(join(dir.path, 'enabled_plugins'), '[rabbitmq_stomp].\n');
  writeFileSync(
    join(dir.path, 'definitions.json'),
    JSON.stringify({
      users: [...Object.values(users), GUEST].map(({ login, passcode }) => ({
        name: login,
        password_hash: passwordHash(passcode),
        hashing_algorithm: 'rabbit_password_hashing_sha256',
        tags: [],
      })),
      vhosts: [{ name: '/' }, { name: vhost }],
      permissions: [
        ...['/', vhost].flatMap((name) =>
          Object.values(users).map(({ login }) => ({
            user: login,
            vhost: name,
            configure: '.*',
            write: '.*',
            read: '.*',
          })),
        ),
        { user: GUEST.login, vhost: '/', configure: '.*', write: '.*', read: '.*' },
      ],
    }),
  );
  writeFileSync(
    join(dir.path, 'rabbitmq.conf'),
    [
      `listeners.tcp.default = 127.0.0.1:${amqpPort}`,
      `stomp.listeners.tcp.1 = 127.0.0.1:${stompPort}`,
      // A client without a login is guest, from this machine only: Debian's broker out of the box.
      `stomp.default_user = ${GUEST.login}`,
      `stomp.default_pass = ${GUEST.passcode}`,
      `load_definitions = ${join(dir.path, 'definitions.json')}`,
      ...(certificates
        ? [
            `stomp.listeners.ssl.1 = 127.0.0.1:${tlsPort}`,
            `ssl_options.cacertfile = ${certificates.ca}`,
            `ssl_options.certfile = ${certificates.server.cert}`,
            `ssl_options.keyfile = ${certificates.server.key}`,
            'ssl_options.verify = verify_peer',
            'ssl_options.fail_if_no_peer_cert = true',
            'stomp.ssl_cert_login = true',
            'ssl_cert_login_from = common_name',
          ]
        : []),
      'log.console = true',
      'log.file = false',
      '',
    ].join('\n'),
  );
  const environment = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir.path,
    LANG: 'C.UTF-8',
    // Not Debian's /etc/rabbitmq/rabbitmq-env.conf: everything below is this broker's own.
    RABBITMQ_CONF_ENV_FILE: join(dir.path, 'no-env-file'),
    RABBITMQ_CONFIG_FILE: join(dir.path, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir.path, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir.path, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir.path, 'log'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir.path, 'plugins-expand'),
    RABBITMQ_NODENAME: `dmstest${stompPort}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
  };

  let epmd: ChildProcess | undefined;
  let server: ChildProcess | undefined;
  let output = '';
  const stop = async (): Promise<void> => {
    await stopGroup(server);
    await stopGroup(epmd);
    server = undefined;
    epmd = undefined;
  };
  const start = async (): Promise<void> => {
    output = '';
    // The node's own port mapper, on its own port, in the foreground: ours to stop.
    epmd = spawn('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], {
      stdio: ['ignore', 'ignore', 'ignore'],
      detached: true,
      env: environment,
    });
    await waitForPort(epmdPort, 10_000, epmd, () => 'epmd did not start');
    server = spawn(join(RABBITMQ_BIN, 'rabbitmq-server'), [], {
      cwd: dir.path,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: environment,
    });
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    server.stdout?.on('data', collect);
    server.stderr?.on('data', collect);
    try {
      await waitForStomp(stompPort, users.reader, 60_000, server, () => output);
    } catch (error) {
      await stop();
      throw error;
    }
  };
  await start();
  return {
    host: '127.0.0.1',
    stompPort,
    users,
    vhost,
    ...(certificates
      ? {
          tls: {
            port: tlsPort,
            caFile: certificates.ca,
            certFile: certificates.client.cert,
            keyFile: certificates.client.key,
          },
        }
      : {}),
    start,
    stop,
    async dispose() {
      await stop();
      dir.dispose();
    },
  };
};

/** Stops a process group: TERM, then KILL after 15 s. */
const stopGroup = async (child: ChildProcess | undefined): Promise<void> => {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
};

const waitForPort = async (port: number, timeoutMs: number, child: ChildProcess, why: () => string): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(why());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Until the STOMP listener answers a CONNECT with CONNECTED (the definitions are loaded by then). */
const waitForStomp = async (
  port: number,
  user: Readonly<{ login: string; passcode: string }>,
  timeoutMs: number,
  child: ChildProcess,
  output: () => string,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`rabbitmq-server exited with ${child.exitCode}:\n${output()}`);
    if (await stompConnects(port, user)) return;
    if (Date.now() > deadline) throw new Error(`rabbitmq-server did not answer STOMP on ${port}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const stompConnects = (port: number, user: Readonly<{ login: string; passcode: string }>): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () =>
      socket.write(`CONNECT\naccept-version:1.2\nhost:/\nlogin:${user.login}\npasscode:${user.passcode}\n\n\u0000`),
    );
    socket.on('data', (data) => {
      answer += data.toString();
      if (answer.includes('\u0000')) finish(answer.startsWith('CONNECTED'));
    });
  });
