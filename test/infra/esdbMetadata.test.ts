import { expect } from 'chai';
import { jsonEvent, KurrentDBClient, UnavailableError } from '@kurrent/kurrentdb-client';
import { multiStreamAppend } from '@kurrent/kurrentdb-client/dist/streams/appendToStream/multiStreamAppend.js';
import { createServer } from 'node:net';
import {
  decodeMetadata,
  encodeMetadata,
  JSON_KEYS_PROPERTY,
  MetadataNotEncodableError,
} from '../../infra/eventstore/esdbMetadata.ts';
import { CHAIN_START, eventHash } from '../../infra/eventstore/eventHashes.ts';
import type { EventMetadata } from '../../infra/eventstore/eventStore.ts';
import { expectRejection } from '../support/expectRejection.ts';

/** Metadata with every kind of field the service writes: strings, a number, a nested object. */
const fullMetadata = (): EventMetadata => ({
  account: 'root',
  requestId: 'b2d4b0e2-7d25-4a3c-9d0e-0f5d8a1c2e3f',
  at: '2026-12-01T10:00:00.000Z',
  schemaVersion: 3,
  causationId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  step: { id: 'a2f0c8f4-5b1e-5d2a-9c3b-7e6f5a4d3c2b', count: 5000 },
  hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
});

describe('Event metadata in atomic multi-stream appends', () => {
  describe('encodeMetadata', () => {
    it('keeps string fields as they are and writes the others as JSON, naming them', () => {
      const flat = encodeMetadata(fullMetadata());
      expect(flat).to.deep.equal({
        account: 'root',
        requestId: 'b2d4b0e2-7d25-4a3c-9d0e-0f5d8a1c2e3f',
        at: '2026-12-01T10:00:00.000Z',
        schemaVersion: '3',
        causationId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
        step: '{"id":"a2f0c8f4-5b1e-5d2a-9c3b-7e6f5a4d3c2b","count":5000}',
        hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        [JSON_KEYS_PROPERTY]: '["schemaVersion","step"]',
      });
    });

    it('refuses a key of the server ($...) and the key that marks encoded fields', () => {
      const metadata = fullMetadata();
      expect(() => encodeMetadata({ ...metadata, ...{ $correlationId: 'x' } })).to.throw(MetadataNotEncodableError);
      expect(() => encodeMetadata({ ...metadata, ...{ [JSON_KEYS_PROPERTY]: '[]' } })).to.throw(
        MetadataNotEncodableError,
      );
    });

    it("gives what the client's own metadata rule for multiStreamAppend accepts, where the metadata as stored is refused", async () => {
      // The client checks metadata before it sends anything; past the check it tries to connect,
      // to a loopback port nobody listens on here, and fails with a connection error instead.
      const port = await closedPort();
      const client = KurrentDBClient.connectionString(`kurrentdb://127.0.0.1:${port}?tls=false&maxDiscoverAttempts=1`);
      try {
        const request = (metadata: Record<string, unknown>) => [
          {
            streamName: 'metadata-rule',
            expectedState: 'any' as const,
            events: [jsonEvent({ type: 'Checked', data: { n: 1 }, metadata })],
          },
        ];
        const refused = await expectRejection(multiStreamAppend.call(client, request({ ...fullMetadata() })), Error);
        expect(refused.message).to.match(/requires metadata to be a plain object with string keys and string values/);
        await expectRejection(
          multiStreamAppend.call(client, request({ ...encodeMetadata(fullMetadata()) })),
          UnavailableError,
        );
      } finally {
        await client.dispose();
      }
    });
  });

  describe('decodeMetadata', () => {
    it('gives back the metadata as given, without the fields the server adds when it reads', () => {
      const metadata = fullMetadata();
      // What a classic read hands back for such an event: the properties as JSON, plus the
      // server's own `$schema.*` (KurrentDB synthesises them from the record's schema).
      const read: unknown = JSON.parse(
        JSON.stringify({ ...encodeMetadata(metadata), '$schema.name': 'Registered', '$schema.format': 'Json' }),
      );
      expect(decodeMetadata(read)).to.deep.equal(metadata);
    });

    it('leaves metadata written by the classic append as it is', () => {
      const metadata = { ...fullMetadata(), nested: { list: [1, 'two', null] } };
      expect(decodeMetadata(metadata)).to.equal(metadata);
    });

    it('keeps a string that reads like JSON a string', () => {
      const metadata = { ...fullMetadata(), requestId: '{"not":"parsed"}', causationId: '42' };
      expect(decodeMetadata(encodeMetadata(metadata))).to.deep.equal(metadata);
    });

    it('refuses a marker that is not a list of keys', () => {
      expect(() => decodeMetadata({ account: 'root', [JSON_KEYS_PROPERTY]: '{"a":1}' })).to.throw(/not a list of keys/);
    });
  });

  it('hashes an event the same whether its metadata went flat or as it is', () => {
    const metadata = fullMetadata();
    const { hash: _hash, ...unhashed } = metadata;
    const event = { id: 'e1', streamName: 'did-user.a:f1', revision: 4n, type: 'Registered', data: { bytes: 12 } };
    const decoded = decodeMetadata(
      JSON.parse(JSON.stringify({ ...encodeMetadata(unhashed), '$schema.name': 'Registered' })),
    ) as EventMetadata;
    expect(eventHash(CHAIN_START, { ...event, metadata: decoded })).to.equal(
      eventHash(CHAIN_START, { ...event, metadata: unhashed }),
    );
  });
});

/** A loopback port that was free a moment ago: connecting to it is refused at once. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};
