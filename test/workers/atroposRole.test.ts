import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { ManualClock } from '../support/clock.ts';
import { roleCycles } from '../support/roleCycles.ts';

const ATROPOS = { workers: true, daemonRoles: ['atropos', 'judge-cleaner'] };

/**
 * Atropos as a user meets it (behaviour reference §8): rules past their end of life are given a
 * short lifetime and the judge-cleaner deletes them, unless an admin approved an exception for
 * their DID.
 */
describe('Roles: atropos and lifetime exceptions at work (§8)', function () {
  this.timeout(60_000);
  let server: TestServer;
  // Running, as the daemons expect between their cycles; a test jumps it over the grace period.
  const clock = new ManualClock({ running: true });
  before(async () => {
    server = await startTestServer({ roles: ATROPOS, clock });
    const cutoff = `${new Date().getUTCFullYear() + 1}-12-31`;
    expectStatus(
      await server.root('POST', '/config', {
        body: {
          atropos: { interval: 1, grace_period: 600 },
          'judge-cleaner': { interval: 1 },
          lifetime_model: { cutoff_date: cutoff },
        },
      }),
      201,
    );
    server = await server.restart();
  });
  after(async () => server.stop());

  const rule = async (scope: string, name: string, rse: string) => {
    expectStatus(
      await server.root('POST', path(scope, name), { body: { type: 'DATASET', meta: { eol_at: '2021-01-01' } } }),
      201,
    );
    return (
      JSON.parse(
        expectStatus(
          await server.root('POST', '/rules/', { body: { dids: [{ scope, name }], copies: 1, rse_expression: rse } }),
          201,
        ).text,
      ) as string[]
    )[0]!;
  };
  const ruleOf = async (ruleId: string) => server.root('GET', `/rules/${ruleId}`);

  it('keeps away from the DIDs of an approved exception, and deletes the other rules past their end of life', async () => {
    const { rse } = await rseWithProtocols(server);
    const scope = await newScope(server);
    const user = await server.createUser();
    const admin = await server.createUser({ admin: true });
    const [covered, condemned] = [uniqueName('kept'), uniqueName('gone')];
    const coveredRule = await rule(scope, covered, rse);
    const condemnedRule = await rule(scope, condemned, rse);

    // The user asks, cannot approve it himself; an admin does.
    const until = new Date(clock.now() + 7 * 86_400_000);
    const answer = expectStatus(
      await server.call('POST', '/lifetime_exceptions/', {
        body: {
          dids: [{ scope, name: covered }],
          comments: 'still analysing',
          expires_at: until.toISOString().slice(0, 19),
        },
        token: user.token,
      }),
      201,
    );
    const [id] = Object.keys(answer.json<{ exceptions: Record<string, unknown> }>().exceptions);
    expectError(
      await server.call('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'A' }, token: user.token }),
      401,
      'AccessDenied',
    );
    expectStatus(
      await server.call('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'A' }, token: admin.token }),
      201,
    );

    // Both rules reach their end of life.
    for (const ruleId of [coveredRule, condemnedRule])
      expectStatus(
        await server.root('PUT', `/rules/${ruleId}`, { body: { options: { eol_at: '2021-06-01 00:00:00' } } }),
        200,
      );

    // Atropos gives the condemned rule the grace period as lifetime; once it has passed, the judge-cleaner deletes the rule.
    await eventually(
      async () =>
        expectStatus(await ruleOf(condemnedRule), 200).json<{ expires_at: string | null }>().expires_at !== null,
      20_000,
      'the rule past its end of life given a lifetime',
    );
    clock.advance(601_000);
    await eventually(
      async () => (await ruleOf(condemnedRule)).status === 404,
      20_000,
      'the rule past its end of life deleted',
    );
    const kept = expectStatus(await ruleOf(coveredRule), 200).json<{ expires_at: string | null; eol_at: string }>();
    expect(kept.expires_at).to.equal(null);
    // Its end of life moved to the exception's end: atropos comes back when the exception runs out.
    expect(Math.abs(Date.parse(kept.eol_at) - until.getTime())).to.be.below(1000);
    // Rucio also records the end of life on the condemned DID.
    expect(
      expectStatus(await server.root('GET', path(scope, condemned, '/meta')), 200).json<{ eol_at: string }>().eol_at,
    ).to.be.a('string');
  });

  it('does nothing but report in a dry run', async () => {
    expectStatus(await server.root('PUT', '/config/atropos/dry_run/True'), 201);
    try {
      const { rse } = await rseWithProtocols(server);
      const scope = await newScope(server);
      const ruleId = await rule(scope, uniqueName('ds'), rse);
      expectStatus(
        await server.root('PUT', `/rules/${ruleId}`, { body: { options: { eol_at: '2021-06-01 00:00:00' } } }),
        200,
      );
      // A whole atropos cycle that saw the rule past its end of life, and only reported it.
      const cycle = await roleCycles(server, 'atropos');
      const reported = cycle.skippedSample.find((skip) => skip.what.startsWith(`rule ${ruleId} `));
      expect(reported?.reason, JSON.stringify(cycle)).to.match(/^dry run: would expire/);
      expect(expectStatus(await ruleOf(ruleId), 200).json<{ expires_at: string | null }>().expires_at).to.equal(null);
    } finally {
      expectStatus(await server.root('DELETE', '/config/atropos/dry_run'), 200);
    }
  });
});
