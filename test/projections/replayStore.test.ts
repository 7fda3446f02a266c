import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { didStreamDecider } from '../../domain/replica/didStreamDecider.ts';
import { requestDecider } from '../../domain/request/requestDecider.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { Decider } from '../../domain/shared/decider.ts';
import type { Event } from '../../domain/shared/event.ts';
import { upcastEvent } from '../../domain/shared/upcasting.ts';
import { eventUpcasters } from '../../domain/upcasters.ts';
import { accountDecider } from '../../domain/account/accountDecider.ts';
import { configDecider } from '../../domain/config/configDecider.ts';
import { identityDecider } from '../../domain/identity/identityDecider.ts';
import { transferLimitsDecider } from '../../domain/request/transferLimitDecider.ts';
import { rseDecider } from '../../domain/rse/rseDecider.ts';
import { scopeDecider } from '../../domain/scope/scopeDecider.ts';
import { importEventLog } from '../../infra/eventstore/eventLog.ts';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { replayQuestions, type Answer, type ReplayRules } from '../fixtures/replayStore/replayQuestions.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * A store written by older code still replays (docs/architecture.md, "Event granularity"): the
 * fixture is the log of a scenario run by the code of commit de6fda5, before transfer requests
 * were batched and a step's events on a stream folded together, with what that code's read models
 * answered about it (test/fixtures/replayStore/makeReplayStore.ts wrote both). Imported into a
 * fresh data directory, every projection builds from it through the upcasters and must answer
 * the same; every stream folds with its decider, and the folded states agree with the read models.
 */

/**
 * What the old code's `GET /admin/messages` listed: rule notifications and LOST only (it now lists
 * every message Rucio's hermes sends; the others are checked on their own below).
 */
const OLD_MESSAGE_TYPES = new Set(['RULE_OK', 'RULE_PROGRESS', 'DATASETLOCK_OK', 'LOST']);
const oldMessages = (text: string): string =>
  text
    .split('\n')
    .filter(
      (line) => line !== '' && OLD_MESSAGE_TYPES.has(String((JSON.parse(line) as { event_type: unknown }).event_type)),
    )
    .map((line) => {
      const { event_type, payload, created_at } = JSON.parse(line) as Record<string, unknown>;
      return `${JSON.stringify({ event_type, payload, created_at })}\n`;
    })
    .join('');

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'replayStore');
const fixture = JSON.parse(readFileSync(join(FIXTURE, 'answers.json'), 'utf8')) as {
  rules: ReplayRules;
  answers: Answer[];
};

/** The decider of each stream category the scenario wrote. */
const DECIDERS: Readonly<Record<string, Decider<unknown, never, Event>>> = {
  account: accountDecider,
  config: configDecider,
  did: didStreamDecider,
  identity: identityDecider,
  request: requestDecider,
  rse: rseDecider,
  rule: ruleDecider,
  scope: scopeDecider,
  transferlimits: transferLimitsDecider,
};

const categoryOf = (streamName: string): string => streamName.split('-')[0]!;

const fold = <State>(decider: Decider<State, never, Event>, events: readonly RecordedEvent[]): State =>
  events.reduce(
    (state, event) =>
      decider.evolve(
        state,
        upcastEvent<Event>(eventUpcasters, {
          type: event.type,
          data: event.data,
          schemaVersion: event.metadata.schemaVersion,
        }),
      ),
    decider.initialState(),
  );

describe('Replay: a store written before the change of event granularity', function () {
  this.timeout(60_000);
  const dir = makeTempDir('replay-');
  let server: TestServer;
  const streams = new Map<string, RecordedEvent[]>();

  before(async () => {
    const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    try {
      await importEventLog(
        eventStore,
        createInterface({ input: createReadStream(join(FIXTURE, 'events.ndjson')), crlfDelay: Infinity }),
      );
      for (const event of await eventStore.readAll({ maxCount: 1_000_000 }))
        streams.set(event.streamName, [...(streams.get(event.streamName) ?? []), event]);
    } finally {
      await eventStore.close();
    }
    server = await startTestServer({ dataDir: dir.path, removeDataDir: () => dir.dispose() });
  });
  after(async () => server?.stop());

  it('builds read models that answer what the code that wrote the store answered', async () => {
    expect(replayQuestions(fixture.rules).map(({ method, path }) => `${method} ${path}`)).to.deep.equal(
      fixture.answers.map(({ method, path }) => `${method} ${path}`),
    );
    for (const answer of fixture.answers) {
      const asked = await server.root(
        answer.method,
        answer.path,
        answer.body === undefined ? {} : { body: answer.body },
      );
      const what = `${answer.method} ${answer.path}`;
      expect(asked.status, what).to.equal(answer.status);
      if (answer.path === '/admin/messages') {
        expect(oldMessages(asked.text), what).to.equal(answer.text);
        continue;
      }
      if (answer.sha256 === undefined) {
        expect(asked.text, what).to.equal(answer.text);
        continue;
      }
      const listed = asked.text
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const { position, stream, type } = JSON.parse(line) as Record<string, unknown>;
          return `${String(position)} ${String(stream)} ${String(type)}`;
        })
        .join('\n');
      expect(listed, what).to.equal(answer.text);
      expect(createHash('sha256').update(asked.text).digest('hex'), what).to.equal(answer.sha256);
    }
  });

  it('gives the transfer messages of the old store’s requests, folded from their streams through the upcasters', async () => {
    const messages = (await server.root('GET', '/admin/messages')).lines<{
      event_type: string;
      payload: Record<string, unknown>;
    }>();
    const done = messages.filter((message) => message.event_type === 'transfer-done');
    expect(done).to.have.length.greaterThan(0);
    for (const { payload } of done) {
      expect(payload['request-id'], JSON.stringify(payload)).to.be.a('string');
      expect(payload['src-rse'], JSON.stringify(payload)).to.equal('SRC');
      expect(payload['dst-url'], JSON.stringify(payload)).to.be.a('string');
      expect(payload['submitted_at'], JSON.stringify(payload)).to.be.a('string');
    }
    expect(messages.filter((message) => message.event_type === 'transfer-submitted')).to.have.length.greaterThan(0);
  });

  it('folds every stream with its decider, through the upcasters', () => {
    expect([...streams.keys()].map(categoryOf).filter((category) => !DECIDERS[category])).to.deep.equal([]);
    for (const [streamName, events] of streams)
      expect(() => fold(DECIDERS[categoryOf(streamName)]!, events), streamName).not.to.throw();
  });

  it('folds transfer requests that all ended: archived, or cancelled with their rule', () => {
    const requests = [...streams].filter(([streamName]) => categoryOf(streamName) === 'request');
    expect(requests).to.have.length.greaterThan(20);
    for (const [streamName, events] of requests) {
      // Each stream of the old store folds as a batch of one: the request its name gives.
      const batch = fold(requestDecider, events);
      expect([...batch.requests.keys()], streamName).to.deep.equal([streamName.slice('request-'.length)]);
      for (const request of batch.requests.values()) expect(request.status, streamName).to.equal('Archived');
    }
  });

  it('folds files whose replicas and locks are those the read models show', async () => {
    for (const [streamName, events] of streams) {
      if (categoryOf(streamName) !== 'did') continue;
      const state = fold(didStreamDecider, events);
      if (state.did.status !== 'Live' || state.did.record.didType !== 'FILE') continue;
      const { scope, name } = state.did.record;
      const listed = await server.root('GET', `/replicas/${scope}/${name}?all_states=true`);
      const states = listed.text
        ? (JSON.parse(listed.text.split('\n')[0]!) as { states: Record<string, string> }).states
        : {};
      // The listing leaves UNAVAILABLE replicas out, even with all_states (as Rucio's does).
      expect(
        Object.fromEntries(
          [...state.replicas.values()]
            .filter((replica) => replica.state !== 'UNAVAILABLE')
            .map((replica) => [replica.rse, replica.state]),
        ),
        streamName,
      ).to.deep.equal(states);
      for (const replica of state.replicas.values()) expect(replica.pendingRequest, streamName).to.equal(null);
    }
  });

  it('folds rules whose lock counters are those the read models show', async () => {
    for (const [key, ruleId] of Object.entries(fixture.rules)) {
      const state = fold(ruleDecider, streams.get(`rule-${ruleId}`)!);
      const response = await server.root('GET', `/rules/${ruleId}`);
      if (state.status !== 'Live') {
        expect(response.status, key).to.equal(404);
        continue;
      }
      const rule = JSON.parse(response.text) as Record<string, unknown>;
      expect(
        { ok: rule.locks_ok_cnt, replicating: rule.locks_replicating_cnt, stuck: rule.locks_stuck_cnt },
        key,
      ).to.deep.equal(state.counters);
      expect(rule.state, key).to.equal(state.state);
    }
  });
});
