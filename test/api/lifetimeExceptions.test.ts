import { expect } from 'chai';
import { lifetimeExceptionStreamName } from '../../domain/lifetimeException/lifetimeException.ts';
import { uniqueName } from '../support/events.ts';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';

type Row = {
  id: string;
  scope: string;
  name: string;
  did_type: string;
  account: string;
  pattern: string | null;
  comments: string | null;
  state: string;
  created_at: string;
  expires_at: string | null;
};
type Answer = {
  exceptions: Record<string, { scope: string; name: string; did_type: string }[]>;
  unknown: unknown[];
  not_affected: unknown[];
};

/**
 * The /lifetime_exceptions routes over HTTP (rest-api-reference §1.13, behaviour reference §8):
 * asked for by any account, listed by all, approved or rejected by admins.
 */
describe('API: lifetime exceptions (§8)', function () {
  this.timeout(30_000);
  let server: TestServer;
  let user: { account: string; token: string };
  let admin: { account: string; token: string };
  let scope: string;
  before(async () => {
    server = await startTestServer();
    user = await server.createUser();
    admin = await server.createUser({ admin: true });
    scope = await newScope(server);
  });
  after(async () => server.stop());

  /** A dataset past its end of life (its `eol_at` column), or without one. */
  const dataset = async (eolAt: string | null = '2020-01-01', meta: object = {}) => {
    const name = uniqueName('ds');
    expectStatus(
      await server.root('POST', path(scope, name), {
        body: { type: 'DATASET', meta: { ...(eolAt ? { eol_at: eolAt } : {}), ...meta } },
      }),
      201,
    );
    return name;
  };
  const ask = (body: object, token = user.token) => server.call('POST', '/lifetime_exceptions/', { body, token });
  const setCutoff = async (value: string | null, maxExtension?: number) => {
    if (value === null) expectStatus(await server.root('DELETE', '/config/lifetime_model'), 200);
    else
      expectStatus(
        await server.root('POST', '/config', {
          body: {
            lifetime_model: {
              cutoff_date: value,
              ...(maxExtension !== undefined ? { max_extension: maxExtension } : {}),
            },
          },
        }),
        201,
      );
  };
  const head = () => server.runtime.services.commands.eventStore.headPosition();
  const inAYear = `${new Date().getUTCFullYear() + 1}-12-31`;

  it("refuses requests while no cutoff date in the future is configured (Rucio's lifetime_model.cutoff_date), writing nothing", async () => {
    const name = await dataset();
    const before = await head();
    expectError(
      await ask({ dids: [{ scope, name }], comments: 'c' }),
      400,
      'UnsupportedOperation',
      /Cannot submit exception at that date/,
    );
    await setCutoff('2001-01-01');
    expectError(
      await ask({ dids: [{ scope, name }], comments: 'c' }),
      400,
      'UnsupportedOperation',
      /Cannot submit exception at that date/,
    );
    expect(await head()).to.equal(before + 1n);
    await setCutoff(inAYear);
  });

  it('records WAITING exceptions for the affected DIDs, one per scope and datatype, and answers with their ids, the unknown and the unaffected DIDs', async () => {
    const [aod1, aod2, esd, recent] = [
      await dataset('2020-01-01', { datatype: 'AOD' }),
      await dataset('2021-01-01', { datatype: 'AOD' }),
      await dataset('2020-01-01', { datatype: 'ESD' }),
      await dataset(null),
    ];
    const expiresAt = new Date(Date.now() + 30 * 86_400_000);
    const response = expectStatus(
      await ask({
        dids: [aod1, aod2, esd, recent, 'ghost'].map((name) => ({ scope, name })),
        pattern: 'analysis.*',
        comments: 'my thesis',
        expires_at: expiresAt.toUTCString().replace('GMT', 'UTC'),
        account: 'ignored',
      }),
      201,
    );
    expect(response.headers['content-type']).to.equal('application/json');
    const answer = response.json<Answer>();
    const groups = Object.values(answer.exceptions).map((dids) => dids.map((did) => did.name).sort());
    expect(groups).to.have.deep.members([[aod1, aod2].sort(), [esd]]);
    expect(
      Object.values(answer.exceptions)
        .flat()
        .every((did) => did.did_type === 'DATASET' && did.scope === scope),
    ).to.equal(true);
    expect(answer.unknown).to.deep.equal([{ scope, name: 'ghost', did_type: 'DATASET' }]);
    expect(answer.not_affected).to.deep.equal([{ scope, name: recent, did_type: 'DATASET' }]);

    const [id] = Object.keys(answer.exceptions).filter((key) =>
      answer.exceptions[key]!.some((did) => did.name === esd),
    );
    const rows = expectStatus(
      await server.call('GET', `/lifetime_exceptions/${id}`, { token: admin.token }),
      200,
    ).lines<Row>();
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({
      id,
      scope,
      name: esd,
      did_type: 'DATASET',
      account: user.account,
      pattern: 'analysis.*',
      comments: 'my thesis',
      state: 'WAITING',
    });
    expect(Math.abs(Date.parse(rows[0]!.expires_at!) - expiresAt.getTime())).to.be.below(1000);
    const all = expectStatus(await server.root('GET', '/lifetime_exceptions/'), 200);
    expect(all.headers['content-type']).to.equal('application/x-json-stream');
    expect(
      all
        .lines<Row>()
        .filter((row) => row.account === user.account)
        .map((row) => row.name),
    ).to.include.members([aod1, aod2, esd]);
  });

  it('caps the end at max_extension days, and takes that when none is given', async () => {
    await setCutoff(inAYear, 10);
    try {
      const answer = expectStatus(
        await ask({ dids: [{ scope, name: await dataset() }], comments: 'c' }),
        201,
      ).json<Answer>();
      const [row] = expectStatus(
        await server.root('GET', `/lifetime_exceptions/${Object.keys(answer.exceptions)[0]}`),
        200,
      ).lines<Row>();
      expect(Date.parse(row!.expires_at!) - Date.now()).to.be.within(10 * 86_400_000 - 60_000, 10 * 86_400_000 + 1000);
    } finally {
      await setCutoff(null);
      await setCutoff(inAYear);
    }
  });

  it('refuses a DID the account asked for already, and one named twice (LifetimeExceptionDuplicate), writing nothing', async () => {
    const name = await dataset();
    const twice = await dataset();
    expectStatus(await ask({ dids: [{ scope, name }], comments: 'c' }), 201);
    const before = await head();
    expectError(await ask({ dids: [{ scope, name }], comments: 'again' }), 409, 'LifetimeExceptionDuplicate');
    expectError(
      await ask({
        dids: [
          { scope, name: twice },
          { scope, name: twice },
        ],
        comments: 'c',
      }),
      409,
      'LifetimeExceptionDuplicate',
      /named twice/,
    );
    expect(await head()).to.equal(before);
    // Another account may ask for the same DID.
    expectStatus(await ask({ dids: [{ scope, name }], comments: 'mine too' }, admin.token), 201);
  });

  it('refuses bad bodies with clear errors, writing nothing', async () => {
    const before = await head();
    const cases: [unknown, number, string, RegExp?][] = [
      ['not json', 400, 'ValueError'],
      [[], 400, 'TypeError'],
      [{ dids: 'data18:ds' }, 400, 'InvalidObject', /is not of type 'array'/],
      [{ dids: [{ name: 'ds' }] }, 400, 'InvalidObject', /'scope' is a required property/],
      [{ dids: [{ scope, name: 'bad name!' }] }, 400, 'InvalidObject', /does not match/],
      [{ dids: [], expires_at: 'tomorrow' }, 400, 'InvalidObject', /expires_at "tomorrow" is not a date/],
      [{ dids: [{ scope, name: 'x' }], expires_at: '2001-01-01T00:00:00' }, 400, 'InvalidObject', /in the past/],
      [{ dids: [], pattern: 'p'.repeat(256) }, 400, 'InvalidObject', /longer than 255/],
      [{ dids: [], comments: 5 }, 400, 'InvalidObject', /comments must be a string/],
    ];
    for (const [body, status, exceptionClass, message] of cases)
      expectError(await ask(body as object), status, exceptionClass, message);
    expect(await head()).to.equal(before);
    // An empty request is no error: nothing is affected.
    expect(expectStatus(await ask({}), 201).json()).to.deep.equal({ exceptions: {}, unknown: [], not_affected: [] });
  });

  describe('PUT /lifetime_exceptions/{id} (Rucio 39 always answers 400 here: see docs/compatibility.md)', () => {
    const requested = async () =>
      Object.keys(
        expectStatus(await ask({ dids: [{ scope, name: await dataset() }], comments: 'c' }), 201).json<Answer>()
          .exceptions,
      )[0]!;
    const state = async (id: string) =>
      expectStatus(await server.root('GET', `/lifetime_exceptions/${id}`), 200).lines<Row>()[0]!.state;

    it('lets an admin approve (A) or reject (R), recording who decided, and answers 201 Created', async () => {
      const id = await requested();
      const response = expectStatus(
        await server.call('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'A' }, token: admin.token }),
        201,
      );
      expect(response.json()).to.equal('Created');
      expect(await state(id)).to.equal('APPROVED');
      expectStatus(await server.root('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'REJECTED' } }), 201);
      expect(await state(id)).to.equal('REJECTED');
      const events = await server.runtime.services.commands.eventStore.readStream(lifetimeExceptionStreamName(id));
      expect(events.map((event) => [event.type, (event.data as { approver?: string }).approver])).to.deep.equal([
        ['ExceptionRequested', undefined],
        ['ExceptionApproved', admin.account],
        ['ExceptionRejected', 'root'],
      ]);
    });

    it('refuses the requester and other non-admins (§9 update_lifetime_exceptions), other states, and unknown ids', async () => {
      const id = await requested();
      const before = await head();
      expectError(
        await server.call('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'A' }, token: user.token }),
        401,
        'AccessDenied',
        /can not update lifetime exceptions/,
      );
      expectError(
        await server.root('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'W' } }),
        400,
        'UnsupportedOperation',
      );
      expectError(
        await server.root('PUT', `/lifetime_exceptions/${id}`, { body: { state: 'maybe' } }),
        400,
        'UnsupportedOperation',
      );
      expectError(await server.root('PUT', `/lifetime_exceptions/${id}`, { body: {} }), 400, 'UnsupportedOperation');
      expectError(
        await server.root('PUT', `/lifetime_exceptions/${'f'.repeat(32)}`, { body: { state: 'A' } }),
        404,
        'LifetimeExceptionNotFound',
      );
      expect(await head()).to.equal(before);
      expect(await state(id)).to.equal('WAITING');
    });

    it('answers 404 for an exception id that does not exist', async () => {
      expectError(await server.root('GET', `/lifetime_exceptions/${'0'.repeat(32)}`), 404, 'LifetimeExceptionNotFound');
    });
  });
});
