import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uniqueName } from '../support/events.ts';
import { ROOT_PASSWORD, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Runs the real Rucio Python client against the service. It needs a Python path under which
 * `rucio.client` (Rucio 39, with its X-Rucio- header names read as X-Svc-) and its dependencies
 * import: RUCIO_CLIENT_PYTHONPATH. Without it the test says so and is skipped.
 */
const pythonPath = process.env.RUCIO_CLIENT_PYTHONPATH;

/** Runs a client script in a child process; the server lives in this process, so never block it. */
const runClient = async (server: TestServer, script: string): Promise<{ status: number | null; stdout: string; stderr: string }> => {
  const home = makeTempDir('rucio-home-');
  try {
    mkdirSync(join(home.path, 'etc'));
    writeFileSync(
      join(home.path, 'etc', 'rucio.cfg'),
      `[client]\nrucio_host = ${server.url}\nauth_host = ${server.url}\nauth_type = userpass\n` +
        `username = ${ROOT_USERNAME}\npassword = ${ROOT_PASSWORD}\naccount = root\nrequest_retries = 2\n`,
    );
    const child = spawn('python3', ['-c', script], {
      env: { ...process.env, RUCIO_HOME: home.path, PYTHONPATH: pythonPath, TMPDIR: home.path },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, stdout, stderr };
  } finally {
    home.dispose();
  }
};

describe('Interop: the Rucio Python client', () => {
  if (!pythonPath) {
    it('runs when RUCIO_CLIENT_PYTHONPATH names an importable Rucio client', function () {
      console.log('      skipped: RUCIO_CLIENT_PYTHONPATH is not set, so the Rucio Python client cannot be imported');
      this.skip();
    });
    return;
  }

  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('manages accounts, identities, scopes and configuration', async () => {
    const account = uniqueName('py');
    const result = await runClient(
      server,
      `
from rucio.client import Client
from rucio.common.exception import AccountNotFound, Duplicate, AccessDenied
c = Client()
assert c.ping() == {'version': '39.0.0rc1'}
assert c.whoami()['account'] == 'root'
assert c.add_account('${account}', 'USER', '${account}@example.org')
info = c.get_account('${account}')
assert info['status'] == 'ACTIVE' and info['account_type'] == 'USER', info
assert '${account}' in [a['account'] for a in c.list_accounts()]
try:
    c.add_account('${account}', 'USER', 'x@example.org')
    raise SystemExit('duplicate accepted')
except Duplicate:
    pass
c.add_scope('${account}', 'user.${account}')
assert c.list_scopes_for_account('${account}') == ['user.${account}']
c.add_identity('${account}', '${account}_login', 'USERPASS', 'e@example.org', password='pw', default=True)
assert {'type': 'USERPASS', 'identity': '${account}_login', 'email': 'e@example.org'} in list(c.list_identities('${account}'))
c.add_account_attribute('${account}', 'site', 'CERN')
assert {'key': 'site', 'value': 'CERN'} in next(iter(c.list_account_attributes('${account}')))
c.delete_account_attribute('${account}', 'site')
c.set_config_option('${account}', 'answer', 42)
assert c.get_config('${account}', 'answer') == 42
c.delete_config_option('${account}', 'answer')
c.update_account('${account}', 'email', 'new@example.org')
assert c.get_account('${account}')['email'] == 'new@example.org'
try:
    c.get_account('nobody-at-all')
    raise SystemExit('missing account found')
except AccountNotFound:
    pass
c.del_identity('${account}', '${account}_login', 'USERPASS')
assert c.delete_account('${account}')
assert '${account}' not in [a['account'] for a in c.list_accounts()]
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });
});
