import { expect } from 'chai';
import { loginCounts, type LoginOutcome } from '../../api/auth/loginStats.ts';
import {
  expectError,
  expectStatus,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  startTestServer,
  type TestServer,
} from '../support/server.ts';
import { uniqueName } from '../support/events.ts';
import { ManualClock } from '../support/clock.ts';

/**
 * Logins (issues 14 and 22): an unknown username takes as long and answers the same as a wrong
 * password, failed logins are slowed down per identity, per identity and client address, and per
 * address once many identities failed from it, with thresholds from /config, never locking out
 * another identity for one's typos; operators can count successes and failures.
 */
describe('API: login hardening', () => {
  let server: TestServer;
  // Running: the throttle's waits are real, and the clock goes on during them as it would.
  const clock = new ManualClock({ running: true });
  before(async () => (server = await startTestServer({ clock })));
  after(async () => server.stop());

  const userpass = (username: string, password: string) =>
    server.call('GET', '/auth/userpass', { headers: { 'X-Svc-Username': username, 'X-Svc-Password': password } });
  const setThrottle = async (options: Record<string, number>) =>
    expectStatus(await server.root('POST', '/config', { body: { auth: options } }), 201);
  const timed = async (call: () => Promise<unknown>): Promise<number> => {
    const started = process.hrtime.bigint();
    await call();
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  /** Lets this address's earlier failures run out: a one-second window, then an attempt that finds them expired. */
  const forgetFailures = async () => {
    await setThrottle({ login_failure_window: 1 });
    clock.advance(1100);
    await server.login(ROOT_USERNAME, 'secret-for-tests');
  };
  const count = (outcome: LoginOutcome) =>
    loginCounts().find((entry) => entry.method === 'userpass' && entry.outcome === outcome)?.count ?? 0;

  it('answers an unknown username as a wrong password, after the same work', async () => {
    await setThrottle({ login_free_failures: 1000 });
    const known = await userpass(ROOT_USERNAME, 'wrong');
    const unknown = await userpass(uniqueName('nobody'), 'wrong');
    expectError(known, 401, 'IdentityNotFound');
    expect(unknown.json()).to.deep.equal(known.json());
    expect(unknown.headers['exceptionmessage']).to.equal(known.headers['exceptionmessage']);
    const knownMs: number[] = [];
    const unknownMs: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      knownMs.push(await timed(() => userpass(ROOT_USERNAME, 'wrong')));
      unknownMs.push(await timed(() => userpass(uniqueName('nobody'), 'wrong')));
    }
    // Before, an unknown name answered in about 2 ms and a known one in over 100 ms (one scrypt each way now).
    expect(median(unknownMs)).to.be.greaterThan(median(knownMs) * 0.5);
    expect(median(knownMs)).to.be.greaterThan(median(unknownMs) * 0.5);
  });

  it('counts successes and failures for operators', async () => {
    const [succeeded, failed] = [count('succeeded'), count('failed')];
    await server.login(ROOT_USERNAME, 'secret-for-tests');
    await userpass(ROOT_USERNAME, 'wrong');
    expect(count('succeeded')).to.equal(succeeded + 1);
    expect(count('failed')).to.equal(failed + 1);
  });

  it('slows down failed logins of one identity with a growing delay, then refuses the ones that would wait too long', async function () {
    this.timeout(30_000);
    const user = await server.createUser();
    await forgetFailures();
    await setThrottle({ login_free_failures: 2, login_delay_base: 0.3, login_delay_max: 1, login_failure_window: 60 });
    expectError(await userpass(user.account, 'wrong'), 401, 'IdentityNotFound');
    expectError(await userpass(user.account, 'wrong'), 401, 'IdentityNotFound');
    const delayed = count('delayed');
    const third = await timed(() => userpass(user.account, 'wrong'));
    const fourth = await timed(() => userpass(user.account, 'wrong'));
    // The delays grow (0.3 s, then 0.6 s): each answer waits at least its own. Comparing the two
    // answers' times with each other would race the machine's load, which adds to either.
    expect(third).to.be.greaterThan(280);
    expect(fourth).to.be.greaterThan(580);
    expect(count('delayed')).to.equal(delayed + 2);
    // Four failures: 1 s between attempts; of two made together the second's turn is 2 s off.
    const together = await Promise.all([userpass(user.account, 'wrong'), userpass(user.account, 'wrong')]);
    const refused = together.find((response) => /Too many failed logins/.test(response.text));
    expect(refused, together.map((response) => response.text).join(' ')).to.not.equal(undefined);
    expectError(refused!, 401, 'CannotAuthenticate');
    // The right password still waits its turn, then succeeds and clears the identity's count.
    clock.advance(1100);
    expectStatus(await userpass(user.account, `pw-${user.account}`), 200);
    await setThrottle({ login_free_failures: 1000 });
  });

  it('slows down an address once many distinct identities failed from it', async function () {
    this.timeout(30_000);
    await forgetFailures();
    await setThrottle({
      login_address_free_identities: 3,
      login_delay_base: 0.4,
      login_delay_max: 2,
      login_failure_window: 60,
    });
    // Three names, one failure each: the address has used its free identities, and a fourth name waits.
    for (let name = 0; name < 3; name += 1) await userpass(uniqueName('guess'), 'wrong');
    const delayed = count('delayed');
    expectError(await userpass(uniqueName('guess'), 'wrong'), 401, 'IdentityNotFound');
    expect(count('delayed')).to.equal(delayed + 1);
    await setThrottle({ login_address_free_identities: 20 });
  });

  it("lets root in at once after another identity's failures from the same address", async function () {
    this.timeout(30_000);
    const user = await server.createUser();
    await forgetFailures();
    await setThrottle({ login_free_failures: 2, login_delay_base: 0.3, login_delay_max: 1, login_failure_window: 60 });
    for (let attempt = 0; attempt < 3; attempt += 1)
      expectError(await userpass(user.account, 'wrong'), 401, 'IdentityNotFound');
    // The user's turns are now further off than the largest delay: refused at once...
    const together = await Promise.all([1, 2, 3].map(() => userpass(user.account, 'wrong')));
    expect(together.some((response) => /Too many failed logins/.test(response.text))).to.equal(true);
    // ...and root, from the same address, neither waits nor is refused.
    const delayed = count('delayed');
    expectStatus(await userpass(ROOT_USERNAME, ROOT_PASSWORD), 200);
    expect(count('delayed')).to.equal(delayed);
    await setThrottle({ login_free_failures: 1000 });
  });
});
