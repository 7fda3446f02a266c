import { expect } from 'chai';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { ServerFeatures } from '@kurrent/kurrentdb-client/dist/Client/ServerFeatures.js';
import features from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb.js';
import streamsV2 from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v2/streams/streams_grpc_pb.js';
import {
  APPEND_SESSION_METHOD,
  AtomicAppendsUnavailableError,
  checkAtomicAppends,
  featureAnswerOf,
} from '../../infra/eventstore/esdbAppendPath.ts';

/**
 * Whether a server is taken, over the answer the client itself makes of a server's
 * ServerFeatures.GetSupportedMethods: the client's own `ServerFeatures`, built from the protobuf
 * message a server sends. The method lists are those the servers' sources register (lower-cased
 * by the server, as it sends them); a few methods of each service stand for the rest.
 */

type Listed = readonly (readonly [service: string, method: string])[];

const V1_METHODS: Listed = [
  ['event_store.client.streams.streams', 'read'],
  ['event_store.client.streams.streams', 'append'],
  ['event_store.client.streams.streams', 'batchappend'],
  ['event_store.client.streams.streams', 'delete'],
  ['event_store.client.persistent_subscriptions.persistentsubscriptions', 'read'],
  ['event_store.client.server_features.serverfeatures', 'getsupportedmethods'],
];

/** A server's answer, as the client turns it into its ServerFeatures. */
const answerOf = (version: string, methods: Listed): ServerFeatures => {
  const supported = new features.SupportedMethods();
  supported.setEventStoreServerVersion(version);
  for (const [service, method] of methods) {
    const listed = new features.SupportedMethod();
    listed.setServiceName(service);
    listed.setMethodName(method);
    supported.addMethods(listed);
  }
  return new ServerFeatures(null, supported);
};

/** What the client makes of a server that does not know the call (EventStoreDB before 21.10). */
const unimplementedAnswer = (): ServerFeatures => {
  const error: ServiceError = Object.assign(new Error('12 UNIMPLEMENTED'), {
    code: status.UNIMPLEMENTED,
    details: '',
    metadata: new Metadata(),
  });
  return new ServerFeatures(error, new features.SupportedMethods());
};

describe('Taking a server for atomic multi-stream appends from its features', () => {
  it('takes KurrentDB 25.1, which serves AppendSession', () => {
    const answer = answerOf('25.1.0', [
      ...V1_METHODS,
      ['kurrentdb.protocol.v2.streams.streamsservice', 'appendsession'],
    ]);
    expect(checkAtomicAppends(featureAnswerOf(answer))).to.deep.equal({
      atomic: true,
      reason: 'server 25.1.0 offers atomic multi-stream appends',
    });
  });

  it('takes KurrentDB 26.1, which serves AppendRecords beside it', () => {
    const answer = answerOf('26.1.0', [
      ...V1_METHODS,
      ['kurrentdb.protocol.v2.streams.streamsservice', 'appendsession'],
      ['kurrentdb.protocol.v2.streams.streamsservice', 'appendrecords'],
    ]);
    expect(checkAtomicAppends(featureAnswerOf(answer)).atomic).to.equal(true);
  });

  it('refuses EventStoreDB 24.10, which serves only the classic services, naming its version and the one needed', () => {
    const check = checkAtomicAppends(featureAnswerOf(answerOf('24.10.5', V1_METHODS)));
    expect(check).to.deep.equal({
      atomic: false,
      reason: 'server 24.10.5 does not offer atomic multi-stream appends',
    });
    expect(new AtomicAppendsUnavailableError(check).message)
      .to.include('server 24.10.5 does not offer atomic multi-stream appends')
      .and.to.include('KurrentDB 25.1 or later');
  });

  it('refuses a 25.1 pre-release, whose MultiStreamAppendSession the client does not call', () => {
    const answer = answerOf('25.1.0', [
      ...V1_METHODS,
      ['kurrentdb.protocol.v2.streamsservice', 'multistreamappend'],
      ['kurrentdb.protocol.v2.streamsservice', 'multistreamappendsession'],
    ]);
    expect(checkAtomicAppends(featureAnswerOf(answer)).atomic).to.equal(false);
  });

  it('refuses a server that does not know the features call', () => {
    expect(checkAtomicAppends(featureAnswerOf(unimplementedAnswer()))).to.deep.equal({
      atomic: false,
      reason:
        'a server without the features call (before EventStoreDB 21.10) does not offer atomic multi-stream appends',
    });
  });

  it('refuses when the answer is not the shape it knows, rather than guess', () => {
    expect(featureAnswerOf({ serverVersion: '25.1.0' })).to.equal(undefined);
    expect(featureAnswerOf(undefined)).to.equal(undefined);
    expect(checkAtomicAppends(undefined).atomic).to.equal(false);
  });

  describe('the installed client', () => {
    it('calls multiStreamAppend through the method the choice looks for', () => {
      expect(streamsV2.StreamsServiceService.appendSession.path.toLowerCase()).to.equal(
        APPEND_SESSION_METHOD.toLowerCase(),
      );
    });

    it('still keeps its answer about the server behind the `capabilities` getter the store reads', () => {
      const getter = Object.getOwnPropertyDescriptor(KurrentDBClient.prototype, 'capabilities')?.get;
      expect(getter, 'KurrentDBClient.prototype.capabilities').to.be.a('function');
    });
  });
});
