import { expect } from 'chai';
import { fileItem, rseWithProtocols } from '../api/replicaSupport.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { rabbitmqMissing, sharedBroker, type TestBroker } from '../support/rabbitmq.ts';
import { ruleOverHttp } from '../support/rules.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { StompReader, type ReadMessage } from '../support/stompReader.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * Hermes as an operator meets it: a server with its workers, Debian's RabbitMQ with its STOMP
 * plugin (test/support/rabbitmq.ts), and a STOMP consumer reading back what the service sent.
 */

type AdminMessage = { event_type: string; payload: Record<string, unknown>; created_at: string; position: number };

const PYTHON_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{6})?$/;

/** The messages about one scope (a test's own), in arrival order. */
const ofScope = (messages: readonly ReadMessage[], scope: string): ReadMessage[] =>
  messages.filter((message) => message.body.payload.scope === scope);

/** Each message once, in the order it first arrived: delivery is at least once. */
const firstArrivals = (messages: readonly ReadMessage[]): ReadMessage[] => {
  const seen = new Set<string>();
  return messages.filter((message) => {
    const key = JSON.stringify(message.body);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

describe('Roles: hermes sends the messages of the log to a STOMP broker (RabbitMQ)', function () {
  this.timeout(180_000);
  const missing = rabbitmqMissing();
  if (missing) {
    it('runs against Debian’s rabbitmq-server', function () {
      skipBecause(this, missing);
    });
    return;
  }

  let broker: TestBroker;
  let server: TestServer;
  const readers: StompReader[] = [];
  const configure = async (options: Record<string, string | number | boolean>) =>
    expectStatus(await server.root('POST', '/config', { body: { 'messaging-hermes': options } }), 201);
  const read = async (destinations: readonly string[]) => {
    const reader = await StompReader.open(broker, destinations);
    readers.push(reader);
    return reader;
  };

  before(async () => {
    broker = await sharedBroker();
    server = await startTestServer({
      roles: { workers: true },
      environment: { DMS_MESSAGING_HERMES_PASSWORD: broker.users.hermes.passcode },
    });
    expectStatus(
      await server.root('POST', '/config', {
        body: {
          hermes: { interval: 0.2 },
          'messaging-hermes': {
            brokers: '127.0.0.1',
            use_ssl: false,
            nonssl_port: broker.stompPort,
            username: broker.users.hermes.login,
            broker_virtual_host: broker.vhost,
          },
        },
      }),
      201,
    );
    // The schedule takes the new interval at start.
    server = await server.restart();
  });
  afterEach(async () => {
    await Promise.all(readers.splice(0).map((reader) => reader.close()));
  });
  after(async () => server.stop());

  it('sends every message in log order, with Rucio’s body and headers, as GET /admin/messages lists them', async () => {
    const destination = `/queue/${uniqueName('events.')}`;
    await configure({ destination, routes: '', event_types: '*' });
    const reader = await read([destination]);
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    expectStatus(await server.root('POST', `/rses/${a.rse}/distances/${b.rse}`, { body: { distance: 1 } }), 201);
    const dataset = uniqueName('ds');
    const container = uniqueName('cnt');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    expectStatus(await server.root('POST', path(scope, container), { body: { type: 'CONTAINER' } }), 201);
    expectStatus(await server.root('POST', '/replicas', { body: { rse: a.rse, files: [fileItem(scope, 'f1')] } }), 201);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, container, '/dids'), { body: { dids: [{ scope, name: dataset }] } }),
      201,
    );
    expectStatus(await server.root('PUT', path(scope, dataset, '/status'), { body: { open: false } }), 200);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: dataset }],
      copies: 1,
      rse_expression: b.rse,
      notify: 'Y',
    });

    await eventually(
      () =>
        reader.eventTypes().includes('rule_ok') &&
        ofScope(reader.messages, scope).some((m) => m.body.event_type === 'datasetlock_ok'),
      60_000,
      'the rule’s notifications at the broker',
    );
    const received = firstArrivals(ofScope(reader.messages, scope));
    expect(received.map((message) => message.body.event_type)).to.deep.equal([
      'create_dts',
      'create_cnt',
      'register_cnt',
      'close',
      'transfer-queued',
      'transfer-submitted',
      'transfer-done',
      'rule_ok',
      'datasetlock_ok',
    ]);
    for (const message of received) {
      expect(message.headers).to.include({ persistent: 'true', event_type: message.body.event_type });
      expect(message.body.created_at).to.match(PYTHON_DATE);
    }
    expect(received[0]!.body.payload).to.deep.equal({ account: 'root', scope, name: dataset, expired_at: null });
    expect(received[2]!.body.payload).to.deep.equal({
      account: 'root',
      scope,
      name: container,
      childscope: scope,
      childname: dataset,
      childtype: 'DATASET',
    });
    expect(received[6]!.body.payload).to.include({
      scope,
      name: 'f1',
      'src-rse': a.rse,
      'dst-rse': b.rse,
      'tool-id': 'rucio-conveyor',
      'transfer-endpoint': 'mock',
      reason: null,
      account: 'root',
    });
    expect(received[7]!.body.payload).to.deep.equal({ scope, name: dataset, rule_id: ruleId });
    // Without a failure nothing is sent twice: once a later message is in, every cycle since has passed.
    expectStatus(await server.root('POST', path(scope, 'last'), { body: { type: 'DATASET' } }), 201);
    await eventually(
      () => ofScope(reader.messages, scope).some((message) => message.body.payload.name === 'last'),
      20_000,
      'a later message',
    );
    const all = ofScope(reader.messages, scope);
    expect(all).to.have.length(received.length + 1);

    // The admin listing is the same feed: the same messages, in the same order, with the stored case.
    const listed = expectStatus(await server.root('GET', '/admin/messages'), 200)
      .lines<AdminMessage>()
      .filter((message) => message.payload.scope === scope);
    expect(listed.map((message) => [message.event_type.toLowerCase(), message.payload])).to.deep.equal(
      all.map((message) => [message.body.event_type, message.body.payload]),
    );
    // `after` starts past a position: the listing from the rule's notification on.
    const ruleOk = listed.find((message) => message.event_type === 'RULE_OK')!;
    const later = expectStatus(await server.root('GET', `/admin/messages?after=${ruleOk.position - 1}`), 200)
      .lines<AdminMessage>()
      .filter((message) => message.payload.scope === scope);
    expect(later.map((message) => message.event_type)).to.deep.equal(['RULE_OK', 'DATASETLOCK_OK', 'CREATE_DTS']);
    expectError(await server.root('GET', '/admin/messages?after=soon'), 400, 'ValueError');
  });

  it('loses nothing while the broker is down: what the log gained meanwhile arrives once it is back, in order', async () => {
    const destination = `/queue/${uniqueName('events.')}`;
    await configure({ destination, routes: '', event_types: '*' });
    const reader = await read([destination]);
    const scope = await newScope(server);
    const names = Array.from({ length: 6 }, (_, index) => `ds${index}`);
    const created = () => firstArrivals(ofScope(reader.messages, scope)).map((message) => message.body.payload.name);
    expectStatus(await server.root('POST', path(scope, names[0]!), { body: { type: 'DATASET' } }), 201);
    await eventually(() => created().length === 1, 20_000, 'the first dataset’s message');

    await broker.stop();
    for (const name of names.slice(1))
      expectStatus(await server.root('POST', path(scope, name), { body: { type: 'DATASET' } }), 201);
    // Hermes says why it waits.
    await eventually(
      async () => {
        const daemons = expectStatus(await server.root('GET', '/admin/daemons'), 200).json<
          { role: string; last_cycle: { skipped_sample: { reason: string }[] } | null }[]
        >();
        const hermes = daemons.find((daemon) => daemon.role === 'hermes');
        const reason = hermes?.last_cycle?.skipped_sample[0]?.reason ?? '';
        return reason.startsWith('no broker reachable') || reason.startsWith('delivery interrupted');
      },
      20_000,
      'hermes reporting the broker unreachable',
    );
    expect(created()).to.deep.equal([names[0]]);

    await broker.start();
    await eventually(() => created().length === names.length, 90_000, 'every dataset’s message after the restart');
    expect(created()).to.deep.equal(names);
  });

  it('sends each event type to the destination its route names, and none that event_types leaves out', async () => {
    const events = `/queue/${uniqueName('events.')}`;
    const containers = `/queue/${uniqueName('containers.')}`;
    await configure({ destination: events, routes: `create_cnt=${containers}`, event_types: 'create_*, close' });
    const reader = await read([events, containers]);
    const scope = await newScope(server);
    expectStatus(await server.root('POST', path(scope, 'd1'), { body: { type: 'DATASET' } }), 201);
    expectStatus(await server.root('POST', path(scope, 'c1'), { body: { type: 'CONTAINER' } }), 201);
    expectStatus(await server.root('PUT', path(scope, 'd1', '/status'), { body: { open: false } }), 200);
    expectStatus(await server.root('PUT', path(scope, 'd1', '/status'), { body: { open: true } }), 200);
    expectStatus(await server.root('POST', path(scope, 'd2'), { body: { type: 'DATASET' } }), 201);

    // d2's creation comes after the reopening in the log: once it is here, an OPEN would have been too.
    await eventually(
      () => ofScope(reader.messages, scope).some((message) => message.body.payload.name === 'd2'),
      20_000,
      'the last dataset’s message',
    );
    const mine = firstArrivals(ofScope(reader.messages, scope));
    expect(
      mine.filter((message) => message.destination === events).map((message) => message.body.event_type),
    ).to.deep.equal(['create_dts', 'close', 'create_dts']);
    expect(
      mine.filter((message) => message.destination === containers).map((message) => message.body.event_type),
    ).to.deep.equal(['create_cnt']);
  });

  it('sends over TLS with its client certificate and no login, as Rucio’s hermes with use_ssl', async function () {
    const tls = broker.tls;
    if (!tls) {
      skipBecause(this, 'openssl is not installed, so the broker has no TLS listener');
    }
    const destination = `/queue/${uniqueName('events.')}`;
    const reader = await read([destination]);
    await configure({
      destination,
      routes: '',
      event_types: '*',
      use_ssl: true,
      port: tls.port,
      ssl_cert_file: tls.certFile,
      ssl_key_file: tls.keyFile,
      ssl_ca_file: tls.caFile,
    });
    try {
      const scope = await newScope(server);
      expectStatus(await server.root('POST', path(scope, 'over-tls'), { body: { type: 'DATASET' } }), 201);
      await eventually(
        () => ofScope(reader.messages, scope).some((message) => message.body.payload.name === 'over-tls'),
        30_000,
        'the message sent over TLS',
      );
    } finally {
      await configure({ use_ssl: false });
    }
  });

  it('refuses a broker password in /config: it comes from the environment', async () => {
    expectError(
      await server.root('POST', '/config', { body: { 'messaging-hermes': { password: 'secret' } } }),
      400,
      'ConfigurationError',
      /DMS_MESSAGING_HERMES_PASSWORD/,
    );
  });
});
