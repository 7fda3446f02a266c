import { expect } from 'chai';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { HeartbeatStore } from '../../infra/heartbeats/heartbeatStore.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allRoles } from '../../workers/roles.ts';
import { ManualClock } from '../support/clock.ts';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';

type HeartbeatLine = {
  readable: string;
  hostname: string;
  pid: number;
  thread_name: string;
  updated_at: string;
  created_at: string;
  payload: string | null;
};

/** `/heartbeats` over HTTP (rest-api-reference §1.10): root lists, admins send, the service's own roles beat. */
describe('API: heartbeats', () => {
  let server: TestServer;
  const clock = new ManualClock();
  before(async () => (server = await startTestServer({ clock })));
  after(async () => server.stop());

  const list = async (token = server.rootToken) =>
    expectStatus(await server.call('GET', '/heartbeats', { token }), 200).json<HeartbeatLine[]>();
  const send = (body: object, token = server.rootToken) => server.call('POST', '/heartbeats', { body, token });
  const beatsOf = async (executable: string) => (await list()).filter((line) => line.readable === executable);

  it('stores a heartbeat sent from outside and lists it with its host, process, thread and payload', async () => {
    const executable = uniqueName('kronos-file');
    const answer = expectStatus(
      await send({ executable, hostname: 'daemon-1.example.org', pid: 1234, payload: 'x' }),
      200,
    );
    expect(answer.text).to.equal('OK');
    const [beat, ...others] = await beatsOf(executable);
    expect(others).to.deep.equal([]);
    expect(beat).to.include({ hostname: 'daemon-1.example.org', pid: 1234, thread_name: 'thread', payload: 'x' });
    expect(beat!.updated_at).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
    expect(beat!.created_at).to.equal(beat!.updated_at);
  });

  it('renews a heartbeat of the same executable, host and process instead of adding one, keeping when it was created', async () => {
    const executable = uniqueName('reaper');
    expectStatus(await send({ executable, hostname: 'h', pid: 1, payload: 'first' }), 200);
    const [first] = await beatsOf(executable);
    expectStatus(await send({ executable, hostname: 'h', pid: 1 }), 200);
    const beats = await beatsOf(executable);
    expect(beats).to.have.length(1);
    expect(beats[0]).to.include({ created_at: first!.created_at, payload: null });
    expect(Date.parse(beats[0]!.updated_at)).to.be.at.least(Date.parse(first!.updated_at));
  });

  it("expires the executable's heartbeats older than `older_than` seconds, and no other executable's", async () => {
    const [executable, other] = [uniqueName('conveyor'), uniqueName('judge')];
    expectStatus(await send({ executable, hostname: 'h', pid: 1 }), 200);
    expectStatus(await send({ executable: other, hostname: 'h', pid: 1 }), 200);
    clock.advance(1000);
    expectStatus(await send({ executable, hostname: 'h', pid: 2, older_than: 3600 }), 200);
    expect((await beatsOf(executable)).map((beat) => beat.pid)).to.deep.equal([1, 2]);
    clock.advance(1000);
    expectStatus(await send({ executable, hostname: 'h', pid: 3, older_than: 0 }), 200);
    expect((await beatsOf(executable)).map((beat) => beat.pid)).to.deep.equal([3]);
    expect(await beatsOf(other)).to.have.length(1);
  });

  it('lets root list them and admins send them, and refuses anyone else with 401 AccessDenied', async () => {
    const admin = await server.createUser({ admin: true });
    const user = await server.createUser();
    const executable = uniqueName('by-admin');
    expectStatus(await send({ executable, hostname: 'h', pid: 1 }, admin.token), 200);
    expect(await beatsOf(executable)).to.have.length(1);
    expectError(await server.call('GET', '/heartbeats', { token: admin.token }), 401, 'AccessDenied');
    expectError(await send({ executable, hostname: 'h', pid: 1 }, user.token), 401, 'AccessDenied');
    expectError(await server.call('GET', '/heartbeats', { token: user.token }), 401, 'AccessDenied');
  });

  it('refuses a heartbeat without a key it needs, or with a value of the wrong type, storing nothing', async () => {
    const executable = uniqueName('bad');
    expectError(await send({ executable, hostname: 'h' }), 400, 'KeyError', /'pid' not defined/);
    expectError(await send({ executable, hostname: 'h', pid: 'one' }), 400, 'TypeError');
    expectError(await send({ executable, hostname: 'h'.repeat(129), pid: 1 }), 400, 'ValueError');
    expectError(await send({ executable, hostname: 'h', pid: 1, older_than: -1 }), 400, 'ValueError');
    expect(await beatsOf(executable)).to.deep.equal([]);
  });

  it('answers 404 on /heartbeats/, as Rucio does', async () =>
    expect((await server.root('GET', '/heartbeats/')).status).to.equal(404));
});

describe('API: heartbeats of the service’s own daemon roles', () => {
  it('lists every role of a worker process while it runs, and none once it stopped', async function () {
    this.timeout(30_000);
    const server = await startTestServer({ roles: { workers: true } });
    try {
      const beats = expectStatus(await server.root('GET', '/heartbeats'), 200)
        .json<HeartbeatLine[]>()
        .filter((line) => line.pid === process.pid && line.hostname === hostname());
      expect(beats.map((line) => line.readable).sort()).to.deep.equal(allRoles.map((role) => role.name).sort());
      expect(beats.every((line) => line.thread_name === 'main')).to.equal(true);
      await server.runtime.stop();
      const readStore = new SqliteReadStore(join(server.dataDir, 'readmodels.sqlite'));
      try {
        expect(await new HeartbeatStore(readStore).list()).to.deep.equal([]);
      } finally {
        await readStore.close();
      }
    } finally {
      await server.stop();
    }
  });
});
