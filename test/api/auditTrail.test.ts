import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { request } from '../support/http.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectError, expectStatus, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { sshKeyPair } from '../support/sshKeys.ts';
import { addReplicas, fileItem, rseWithProtocols } from './replicaSupport.ts';
import { ruleOverHttp } from '../support/rules.ts';

/** What these tests read of an audit line. */
type AuditLine = Readonly<{
  position: number;
  stream: string;
  type: string;
  account: string;
  identity?: Readonly<{ kind: string; value: string }>;
  correlation_id?: string;
  causation_id: string | null;
  data: Readonly<{
    scope?: string;
    name?: string;
    rse?: string;
    rule?: { subscriptionId: string | null };
    transfer?: { requestId: string; ruleId: string };
  }>;
}>;

const DN_HEADER = 'X-Test-Client-DN';
const traceId = () => randomBytes(16).toString('hex');
const spanId = () => randomBytes(8).toString('hex');

/**
 * Items 3 and 4 of issue 33: every event records the identity that acted beside the account, and
 * the trace of the request that caused it, daemon work included; the audit lists and filters by
 * both. Item 5: decisions taken on one stream show in the histories of what they concern.
 */
describe('API: who acted, and what one request caused', function () {
  this.timeout(120_000);
  let server: TestServer;
  before(
    async () =>
      (server = await startTestServer({ roles: { workers: true }, environment: { DMS_X509_DN_HEADER: DN_HEADER } })),
  );
  after(async () => server.stop());

  const lines = async (url: string): Promise<AuditLine[]> =>
    expectStatus(await server.root('GET', url), 200).lines<AuditLine>();

  /** An account with one more identity of the given type mapped to it. */
  const mapIdentity = async (account: string, authtype: string, identity: string, password?: string) =>
    expectStatus(
      await server.root('POST', `/accounts/${account}/identities`, {
        body: { identity, authtype, email: `${account}@example.org`, ...(password ? { password } : {}) },
      }),
      201,
    );

  const sharedAccount = async () => {
    const account = uniqueName('shared');
    expectStatus(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: `${account}@example.org` } }),
      201,
    );
    return { account, scope: await newScope(server, account) };
  };

  const createdBy = (history: readonly AuditLine[], name: string) =>
    history.find((line) => line.type === 'DidCreated' && line.data.name === name);

  it('records which of two people sharing an account created what, and lists what each did', async () => {
    const { account, scope } = await sharedAccount();
    const alice = uniqueName('alice');
    const bob = uniqueName('bob');
    await mapIdentity(account, 'USERPASS', alice, `pw-${alice}`);
    await mapIdentity(account, 'USERPASS', bob, `pw-${bob}`);
    const aliceToken = await server.login(alice, `pw-${alice}`, account);
    const bobToken = await server.login(bob, `pw-${bob}`, account);
    expectStatus(
      await server.call('POST', path(scope, 'by-alice'), { token: aliceToken, body: { type: 'DATASET' } }),
      201,
    );
    expectStatus(await server.call('POST', path(scope, 'by-bob'), { token: bobToken, body: { type: 'DATASET' } }), 201);

    const history = await lines(`/audit/accounts/${account}/events`);
    expect(createdBy(history, 'by-alice')).to.deep.include({ account, identity: { kind: 'USERPASS', value: alice } });
    expect(createdBy(history, 'by-bob')).to.deep.include({ account, identity: { kind: 'USERPASS', value: bob } });

    const alices = await lines(`/audit/events?identity_type=USERPASS&identity=${alice}`);
    expect(alices.map((line) => line.data.name)).to.deep.equal(['by-alice']);
    const bobsOfTheAccount = await lines(
      `/audit/accounts/${account}/events?identity_type=USERPASS&identity=${encodeURIComponent(bob)}`,
    );
    expect(bobsOfTheAccount.map((line) => [line.type, line.data.name])).to.deep.equal([['DidCreated', 'by-bob']]);
  });

  it("records a certificate login by its DN and an SSH login by its key's fingerprint", async () => {
    const { account, scope } = await sharedAccount();
    const dn = `/DC=org/DC=example/OU=People/CN=${uniqueName('carol')} Doe`;
    await mapIdentity(account, 'X509', dn);
    const key = sshKeyPair('ed25519');
    await mapIdentity(account, 'SSH', key.publicLine);

    const x509 = expectStatus(
      await request(server.url, 'GET', '/auth/x509', { headers: { [DN_HEADER]: dn, 'X-Svc-Account': account } }),
      200,
    );
    const x509Token = String(x509.headers['x-svc-auth-token']);
    const challenge = String(
      expectStatus(
        await request(server.url, 'GET', '/auth/ssh_challenge_token', { headers: { 'X-Svc-Account': account } }),
        200,
      ).headers['x-svc-ssh-challenge-token'],
    );
    const ssh = expectStatus(
      await request(server.url, 'GET', '/auth/ssh', {
        headers: { 'X-Svc-Account': account, 'X-Svc-SSH-Signature': key.sign(challenge) },
      }),
      200,
    );
    const sshToken = String(ssh.headers['x-svc-auth-token']);
    expectStatus(
      await server.call('POST', path(scope, 'by-cert'), { token: x509Token, body: { type: 'DATASET' } }),
      201,
    );
    expectStatus(await server.call('POST', path(scope, 'by-key'), { token: sshToken, body: { type: 'DATASET' } }), 201);

    // OpenSSH's fingerprint, computed here from the key's blob: `SHA256:` and unpadded base64.
    const blob = Buffer.from(key.publicLine.split(' ')[1]!, 'base64');
    const fingerprint = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
    const history = await lines(`/audit/accounts/${account}/events`);
    expect(createdBy(history, 'by-cert')?.identity).to.deep.equal({ kind: 'X509', value: dn });
    expect(createdBy(history, 'by-key')?.identity).to.deep.equal({ kind: 'SSH', value: fingerprint });
    const byDn = await lines(`/audit/events?identity_type=X509&identity=${encodeURIComponent(dn)}`);
    expect(byDn.map((line) => line.data.name)).to.deep.equal(['by-cert']);
  });

  it('refuses an identity filter without its type, an unknown type and a malformed trace id', async () => {
    expectError(await server.root('GET', '/audit/events?identity=someone'), 400, 'ValueError', /go together/);
    expectError(await server.root('GET', '/audit/events?identity_type=PIGEON&identity=x'), 400, 'ValueError');
    expectError(
      await server.root('GET', '/audit/events?identity_type=userpass&identity=x'),
      400,
      'ValueError',
      /^identity_type must be one of X509, GSS, USERPASS, SSH, SAML, OIDC, DAEMON, CLI, SERVICE, not 'userpass'$/,
    );
    expectError(await server.root('GET', '/audit/traces/not-a-trace/events'), 400, 'ValueError');
    expectError(await server.root('GET', `/audit/events?trace=${'0'.repeat(32)}`), 400, 'ValueError');
    const user = await server.createUser();
    expectError(
      await server.call('GET', `/audit/traces/${traceId()}/events`, { token: user.token }),
      401,
      'AccessDenied',
    );
  });

  it("ties a request's events and the daemon work they set off to the request's traceparent", async () => {
    const scope = await newScope(server);
    const rse = await rseWithProtocols(server);
    const subscription = uniqueName('sub');
    const added = await server.root('POST', `/subscriptions/root/${subscription}`, {
      body: {
        options: {
          filter: { scope: [scope], did_type: ['DATASET'] },
          replication_rules: [{ copies: 1, rse_expression: rse.rse }],
          comments: 'follows the trace',
          lifetime: null,
          retroactive: false,
        },
      },
    });
    const subscriptionId = expectStatus(added, 201).text;
    const trace = traceId();
    const created = expectStatus(
      await server.root('POST', path(scope, 'traced'), {
        headers: { traceparent: `00-${trace}-${spanId()}-01` },
        body: { type: 'DATASET' },
      }),
      201,
    );
    expect(created.headers['x-trace-id']).to.equal(trace);

    // The transmogrifier, set off by the dataset's creation, adds the subscription's rule.
    let caused: AuditLine[] = [];
    await eventually(
      async () => (caused = await lines(`/audit/traces/${trace}/events`)).some((line) => line.type === 'RuleAdded'),
      30_000,
      "the transmogrifier's rule in the request's trace",
    );
    expect(caused.every((line) => line.correlation_id === trace)).to.equal(true);
    const request = caused.find((line) => line.type === 'DidCreated')!;
    expect(request).to.deep.include({ account: 'root', identity: { kind: 'USERPASS', value: ROOT_USERNAME } });
    const rule = caused.find((line) => line.type === 'RuleAdded')!;
    expect(rule).to.deep.include({ account: 'root', identity: { kind: 'DAEMON', value: 'transmogrifier' } });
    expect(rule.causation_id).to.match(/^transmogrifier\//);
    expect(rule.data.rule?.subscriptionId).to.equal(subscriptionId);
    // The same through the feed's filter.
    const feed = await lines(`/audit/events?trace=${trace}&type=RuleAdded`);
    expect(feed.map((line) => line.position)).to.deep.equal([rule.position]);

    // A rule a subscription decided shows in the dataset's history and in the subscription's.
    const didHistory = await lines(`/audit/dids/${scope}/traced/events`);
    expect(didHistory.map((line) => line.position)).to.include(rule.position);
    const subscriptionHistory = await lines(`/audit/subscriptions/${subscriptionId}/events`);
    expect(subscriptionHistory.map((line) => line.position)).to.include(rule.position);
  });

  it('makes a trace at the edge for a request without a usable traceparent', async () => {
    const scope = await newScope(server);
    const given = `00-${'0'.repeat(32)}-${spanId()}-01`;
    const answer = expectStatus(
      await server.root('POST', path(scope, 'untraced'), {
        headers: { traceparent: given },
        body: { type: 'DATASET' },
      }),
      201,
    );
    const made = String(answer.headers['x-trace-id']);
    expect(made).to.match(/^[0-9a-f]{32}$/);
    expect(made).not.to.equal('0'.repeat(32));
    // The request's own event; the transmogrifier's mark of the new dataset may follow in it.
    const caused = await lines(`/audit/traces/${made}/events`);
    expect(caused[0]).to.deep.include({ type: 'DidCreated', correlation_id: made });
    expect(caused[0]!.data.name).to.equal('untraced');
    expect(caused.every((line) => line.correlation_id === made && line.data.name === 'untraced')).to.equal(true);
  });

  it('shows a source declared suspicious by a failed transfer in the histories of the file, the source RSE and the rule whose copy failed', async () => {
    const scope = await newScope(server);
    const source = await rseWithProtocols(server);
    const destination = await rseWithProtocols(server);
    expectStatus(
      await server.root('POST', `/rses/${source.rse}/distances/${destination.rse}`, { body: { distance: 1 } }),
      201,
    );
    // The mock tool fails every copy to the destination; its error names the source suspicious.
    expectStatus(
      await server.root('POST', `/rses/${destination.rse}/attr/mock_outcome`, { body: { value: 'failed' } }),
      201,
    );
    expectStatus(
      await server.root('PUT', `/config/conveyor/suspicious_pattern/${encodeURIComponent('.*Mock transfer failed.*')}`),
      201,
    );
    const file = uniqueName('f');
    await addReplicas(server, source.rse, [fileItem(scope, file)]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: file }],
      copies: 1,
      rse_expression: destination.rse,
    });

    let ruleHistory: AuditLine[] = [];
    await eventually(
      async () =>
        (ruleHistory = await lines(`/audit/rules/${ruleId}/events`)).some(
          (line) => line.type === 'ReplicaDeclaredSuspicious',
        ),
      60_000,
      "the suspicious declaration in the rule's history",
    );
    const declaration = ruleHistory.find((line) => line.type === 'ReplicaDeclaredSuspicious')!;
    expect(declaration).to.deep.include({ stream: `did-${scope}:${file}`, account: 'root' });
    expect(declaration.identity).to.deep.equal({ kind: 'DAEMON', value: 'conveyor-finisher' });
    expect(declaration.data).to.deep.include({ rse: source.rse });
    expect(declaration.data.transfer?.ruleId).to.equal(ruleId);
    const fileHistory = await lines(`/audit/dids/${scope}/${file}/events`);
    expect(fileHistory.map((line) => line.position)).to.include(declaration.position);
    const sourceHistory = await lines(`/audit/rses/${source.rse}/events`);
    expect(sourceHistory.map((line) => line.position)).to.include(declaration.position);
    // The destination only received a failed copy: the declaration is not about it.
    const destinationHistory = await lines(`/audit/rses/${destination.rse}/events`);
    expect(destinationHistory.map((line) => line.position)).not.to.include(declaration.position);
  });

  it("shows a lifetime exception's approval and rejection in the history of each DID it covers", async () => {
    const scope = await newScope(server);
    const datasets = [uniqueName('ds'), uniqueName('ds')];
    for (const name of datasets)
      expectStatus(
        await server.root('POST', path(scope, name), { body: { type: 'DATASET', meta: { eol_at: '2020-01-01' } } }),
        201,
      );
    const cutoff = `${new Date().getUTCFullYear() + 1}-12-31`;
    expectStatus(await server.root('POST', '/config', { body: { lifetime_model: { cutoff_date: cutoff } } }), 201);
    const asked = expectStatus(
      await server.root('POST', '/lifetime_exceptions/', {
        body: { dids: datasets.map((name) => ({ scope, name })), comments: 'two datasets' },
      }),
      201,
    ).json<{ exceptions: Record<string, unknown> }>();
    const [id] = Object.keys(asked.exceptions);
    expectStatus(await server.root('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'A' } }), 201);
    expectStatus(await server.root('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'R' } }), 201);
    for (const name of datasets) {
      // The DID's own events (its creation and metadata, the transmogrifier's mark of it as
      // processed) come in their own order; the exception's decisions follow its request.
      const history = await lines(`/audit/dids/${scope}/${name}/events`);
      const decisions = history.filter((line) => line.stream === `lifetimeexception-${id}`);
      expect(
        decisions.map((line) => [line.type, line.identity?.value]),
        name,
      ).to.deep.equal([
        ['ExceptionRequested', ROOT_USERNAME],
        ['ExceptionApproved', ROOT_USERNAME],
        ['ExceptionRejected', ROOT_USERNAME],
      ]);
    }
  });
});
