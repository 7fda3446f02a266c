import { expect } from 'chai';
import { deleteExpiredDid, type ExpiryOptions } from '../../commands/did/didLifecycleCommands.ts';
import { OBSOLETE_TOMBSTONE } from '../../domain/replica/replica.ts';
import { createRse } from '../api/rseSupport.ts';
import { ruleOverHttp } from '../support/rules.ts';
import { UnsupportedOperation } from '../../domain/shared/errors.ts';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { aFile, newScope, path, registerFiles } from '../support/dids.ts';

/**
 * The undertaker's command (behaviour rule 7), issued as root as the daemon will issue it. The
 * DIDs are made to expire by setting a past `lifetime`; the decider tests cover the refusal of a
 * DID with a locked rule.
 */
describe('Command: deleting an expired DID (behaviour rule 7)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const undertake = async (scope: string, name: string, options?: ExpiryOptions) => {
    const { commands, progress } = server.runtime.services;
    const outcome = await deleteExpiredDid(
      commands,
      { scope, name },
      { now: new Date(), account: 'root', requestId: uniqueName('undertaker-') },
      options,
    );
    if (outcome.position !== undefined) await progress.waitFor(outcome.position, 5000);
    return outcome;
  };
  const expire = async (scope: string, name: string) =>
    expectStatus(await server.root('POST', path(scope, name, '/meta/lifetime'), { body: { value: -1 } }), 201);

  it('deletes an expired dataset after detaching it from its parents, with its content and followers', async () => {
    const scope = await newScope(server);
    await registerFiles(server, [aFile(scope, 'f1')]);
    expectStatus(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'cnt'), { body: { type: 'CONTAINER', dids: [{ scope, name: 'ds' }] } }),
      201,
    );
    expectStatus(await server.root('POST', path(scope, 'ds', '/follow'), { body: { account: 'root' } }), 201);
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/colour'), { body: { value: 'red' } }), 201);
    await expire(scope, 'ds');

    await undertake(scope, 'ds');

    expectError(await server.root('GET', path(scope, 'ds')), 404, 'DataIdentifierNotFound');
    expect(expectStatus(await server.root('GET', path(scope, 'cnt', '/dids')), 200).text).to.equal('');
    expect(expectStatus(await server.root('GET', path(scope, 'cnt')), 200).json()).to.include({ length: 0 });
    expect(expectStatus(await server.root('GET', path(scope, 'cnt', '/dids/history')), 200).lines()).to.have.length(1);
    expect(expectStatus(await server.root('GET', path(scope, 'f1', '/parents')), 200).text).to.equal('');
    expect(expectStatus(await server.root('GET', path(scope, 'f1')), 200).json()).to.include({ name: 'f1' });
    expectError(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }),
      406,
      'DatabaseException',
      /A deleted DID ds with scope .* is reused/,
    );

    expectStatus(await server.root('POST', '/dids/resurrect', { body: [{ scope, name: 'ds' }] }), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'ds')), 200).json()).to.include({
      expired_at: null,
      open: true,
    });
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/dids')), 200).text).to.equal('');
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/follow')), 200).text).to.equal('');
  });

  it('keeps an expired file, without its expiry and JSON metadata, detached from its datasets', async () => {
    const scope = await newScope(server);
    await registerFiles(server, [aFile(scope, 'f1', { meta: { colour: 'red' } })]);
    expectStatus(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    expect(expectStatus(await server.root('GET', path(scope, 'f1', '/meta?plugin=JSON')), 200).json()).to.deep.equal({
      colour: 'red',
    });
    await expire(scope, 'f1');

    await undertake(scope, 'f1');

    expect(expectStatus(await server.root('GET', path(scope, 'f1', '/meta')), 200).json()).to.include({
      expired_at: null,
      did_type: 'FILE',
    });
    expect(expectStatus(await server.root('GET', path(scope, 'f1', '/meta?plugin=JSON')), 200).json()).to.deep.equal(
      {},
    );
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/dids')), 200).text).to.equal('');
  });

  it('only expires within the hour a rule holding more locks than expire_rules_locks_size, and keeps the DID another day', async () => {
    const scope = await newScope(server);
    const rse = await createRse(server);
    expectStatus(
      await server.root('POST', '/replicas', { body: { rse, files: [aFile(scope, 'f1'), aFile(scope, 'f2')] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'ds'), {
        body: {
          type: 'DATASET',
          dids: [
            { scope, name: 'f1' },
            { scope, name: 'f2' },
          ],
        },
      }),
      201,
    );
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: rse });
    await expire(scope, 'ds');

    const outcome = await undertake(scope, 'ds', { expireRulesLocksSize: 1, purgeAllReplicas: false });

    expect(outcome.postponed).to.match(/holds 2 locks: expired within the hour, the DID kept another day/);
    const rule = expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json<{ expires_at: string | null }>();
    expect(rule.expires_at).to.be.a('string');
    const did = expectStatus(await server.root('GET', path(scope, 'ds')), 200).json<{ expired_at: string }>();
    expect(Date.parse(did.expired_at) - Date.now()).to.be.greaterThan(23 * 3_600_000);
  });

  it('gives the unlocked replicas of an expired dataset’s files an obsolete tombstone with purge_all_replicas', async () => {
    const scope = await newScope(server);
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/attr/tombstone_delay`, { body: { value: '3600' } }), 201);
    expectStatus(await server.root('POST', '/replicas', { body: { rse, files: [aFile(scope, 'f1')] } }), 201);
    expectStatus(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    await expire(scope, 'ds');

    await undertake(scope, 'ds', { expireRulesLocksSize: 10_000, purgeAllReplicas: true });

    const state = expectStatus(await server.root('GET', `/audit/dids/${scope}/f1/state`), 200).json<{
      replicas: { tombstone: string | null }[];
    }>();
    expect(state.replicas.map((replica) => replica.tombstone)).to.deep.equal([OBSOLETE_TOMBSTONE]);
  });

  it('refuses a DID that has not expired, changing nothing', async () => {
    const scope = await newScope(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', lifetime: 3600 } }), 201);
    let failure: unknown;
    try {
      await undertake(scope, 'ds');
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(UnsupportedOperation);
    expect(expectStatus(await server.root('GET', path(scope, 'ds')), 200).json()).to.include({ name: 'ds' });
  });
});
