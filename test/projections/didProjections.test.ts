import { projectEvents } from '../support/projectionHarness.ts';
import { expect } from 'chai';
import { didStreamName, type DidEvent } from '../../domain/did/did.ts';
import {
  didContentHistoryCollection,
  didContentsCollection,
  type ContentDocument,
} from '../../projections/did/didContentsProjection.ts';
import { didFollowersCollection } from '../../projections/did/didFollowersProjection.ts';
import { didsCollection, type DidDocument } from '../../projections/did/didsProjection.ts';
import { AT } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';

/**
 * given(events).then(read models): the events are appended to their DIDs' streams and the real
 * runner projects them, in small batches so that one DID's events span several.
 */
const given = (events: DidEvent[], options: { twice?: boolean } = {}) =>
  projectEvents(
    'did-projections-',
    events.map((event) => {
      const { scope, name } = event.data as { scope: string; name: string };
      return { stream: didStreamName(scope, name), type: event.type, data: event.data };
    }),
    async (read) => ({
      dids: await read<DidDocument>(didsCollection),
      contents: await read<ContentDocument>(didContentsCollection),
      history: await read<ContentDocument & { deleted_at: string }>(didContentHistoryCollection),
      followers: await read<{ account: string }>(didFollowersCollection),
    }),
    options,
  );

const attached = (name: string, children: string[], length: number): DidEvent => ({
  type: 'DidsAttached',
  data: {
    scope: 'user.jdoe',
    name,
    didType: 'DATASET',
    children: children.map((child) => fileEntry(child)),
    totals: { length, bytes: 100 * length, events: 10 * length },
    attachedAt: AT,
  },
});
const detached = (name: string, children: string[], length: number): DidEvent => ({
  type: 'DidsDetached',
  data: {
    scope: 'user.jdoe',
    name,
    didType: 'DATASET',
    children: children.map((child) => fileEntry(child)),
    totals: { length, bytes: 100 * length, events: 10 * length },
    detachedAt: AT,
  },
});

describe('DID projections', () => {
  it('keep one document per DID and one edge per attachment, moving detached edges to the history', async () => {
    const { dids, contents, history } = await given([
      created('f1', 'FILE'),
      created('f2', 'FILE'),
      created('ds', 'DATASET'),
      attached('ds', ['f1', 'f2'], 2),
      detached('ds', ['f1'], 1),
      attached('ds', ['f1'], 2),
      detached('ds', ['f1'], 1),
      {
        type: 'DidMetadataSet',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          columns: { project: 'p1', run_number: null },
          json: { colour: 'red' },
          setAt: AT,
        },
      },
    ]);
    expect(dids.map((did) => did._id)).to.deep.equal(['user.jdoe:ds', 'user.jdoe:f1', 'user.jdoe:f2']);
    expect(dids[0]).to.include({
      did_type: 'DATASET',
      length: 1,
      bytes: 100,
      events: 10,
      project: 'p1',
      is_open: true,
      is_new: true,
    });
    expect(dids[0]!.meta).to.deep.equal({ colour: 'red' });
    expect(dids[0]).to.not.have.property('run_number');
    expect(dids[1]).to.include({ did_type: 'FILE', bytes: 100, adler32: '0cc737eb' });
    expect(contents.map((edge) => edge._id)).to.deep.equal(['user.jdoe:ds user.jdoe:f2']);
    expect(history.map((edge) => edge.childKey)).to.deep.equal(['user.jdoe:f1', 'user.jdoe:f1']);
  });

  it('converge to the same documents when every event is delivered twice', async () => {
    const events: DidEvent[] = [
      created('f1', 'FILE'),
      created('ds', 'DATASET'),
      attached('ds', ['f1'], 1),
      {
        type: 'DidFollowed',
        data: { scope: 'user.jdoe', name: 'ds', didType: 'DATASET', account: 'alice', followedAt: AT },
      },
      {
        type: 'DidClosed',
        data: { scope: 'user.jdoe', name: 'ds', totals: { length: 1, bytes: 100, events: 10 }, closedAt: AT },
      },
    ];
    const once = await given(events);
    const twice = await given(events, { twice: true });
    const strip = (documents: object[]) => documents.map(({ _pos, ...rest }: { _pos?: number }) => rest);
    expect(strip(twice.dids)).to.deep.equal(strip(once.dids));
    expect(strip(twice.contents)).to.deep.equal(strip(once.contents));
    expect(twice.followers).to.have.length(1);
  });

  it('remove an erased collection with its edges and followers', async () => {
    const { dids, contents, followers } = await given([
      created('f1', 'FILE'),
      created('ds', 'DATASET'),
      attached('ds', ['f1'], 1),
      {
        type: 'DidFollowed',
        data: { scope: 'user.jdoe', name: 'ds', didType: 'DATASET', account: 'alice', followedAt: AT },
      },
      {
        type: 'DidErased',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          didType: 'DATASET',
          children: [{ scope: 'user.jdoe', name: 'f1' }],
          erasedAt: AT,
        },
      },
    ]);
    expect(dids.map((did) => did._id)).to.deep.equal(['user.jdoe:f1']);
    expect(contents).to.deep.equal([]);
    expect(followers).to.deep.equal([]);
  });

  it('bring a resurrected collection back without content', async () => {
    const { dids, contents } = await given([
      created('f1', 'FILE'),
      created('ds', 'DATASET'),
      attached('ds', ['f1'], 1),
      {
        type: 'DidErased',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          didType: 'DATASET',
          children: [{ scope: 'user.jdoe', name: 'f1' }],
          erasedAt: AT,
        },
      },
      {
        type: 'DidResurrected',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          restored: {
            didType: 'DATASET',
            account: 'jdoe',
            createdAt: AT,
            monotonic: false,
            isOpen: true,
            closedAt: null,
            columns: { project: 'p1' },
          },
          resurrectedAt: AT,
        },
      },
    ]);
    expect(dids.find((did) => did._id === 'user.jdoe:ds')).to.include({
      did_type: 'DATASET',
      is_open: true,
      project: 'p1',
      account: 'jdoe',
    });
    expect(dids.find((did) => did._id === 'user.jdoe:ds')).to.not.have.property('length');
    expect(contents).to.deep.equal([]);
  });
});
