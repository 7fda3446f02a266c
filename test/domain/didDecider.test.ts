import { expect } from 'chai';
import { didStreamDecider } from '../../domain/replica/didStreamDecider.ts';
import { evolveDid, initialDid, NO_TOTALS, type DidEvent } from '../../domain/did/did.ts';
import {
  DatabaseException,
  DataIdentifierAlreadyExists,
  DataIdentifierNotFound,
  Duplicate,
  InvalidObject,
  UnsupportedOperation,
} from '../../domain/shared/errors.ts';
import { nameSchemaOf } from '../../domain/shared/names.ts';
import { AT, deciderSpec, metadata, NOW } from '../support/deciderSpec.ts';
import { collectionEntry, created, fileEntry, fileFacts } from '../support/didEvents.ts';

/** DID commands as production decides them: on the DID's stream, whose decider hands them to the DID decider. */
const given = deciderSpec(didStreamDecider);
const LATER = new Date(NOW.getTime() + 3_600_000).toISOString();
const EARLIER = new Date(NOW.getTime() - 1000).toISOString();

const createCollection = (name: string, extra: Record<string, unknown> = {}) =>
  ({
    type: 'CreateCollection',
    data: {
      scope: 'user.jdoe',
      name,
      didType: 'DATASET',
      account: 'jdoe',
      monotonic: false,
      lifetime: null,
      meta: {},
      conventions: new Map(),
      children: [],
      nameSchema: nameSchemaOf('generic'),
      ...extra,
    },
    metadata: metadata('jdoe'),
  }) as const;

const erased: DidEvent = {
  type: 'DidErased',
  data: { scope: 'user.jdoe', name: 'ds', didType: 'DATASET', children: [], erasedAt: AT },
};

describe('DID decider: creation (behaviour rule 1)', () => {
  it('creates an open collection, with its expiry, metadata and content', () =>
    given([])
      .when(
        createCollection('ds', {
          lifetime: 3600,
          meta: { project: 'p1', colour: 'blue' },
          children: [{ request: { scope: 'user.jdoe', name: 'f1' }, facts: fileFacts() }],
        }),
      )
      .then([
        created('ds', 'DATASET', { expiredAt: LATER }),
        {
          type: 'DidMetadataSet',
          data: { scope: 'user.jdoe', name: 'ds', columns: { project: 'p1' }, json: { colour: 'blue' }, setAt: AT },
        },
        {
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'DATASET',
            children: [fileEntry('f1')],
            totals: { length: 1, bytes: 100, events: 10 },
            attachedAt: AT,
          },
        },
      ]));

  describe('refuses a name taken', () => {
    it('by a DID that exists', () =>
      given([created('ds', 'CONTAINER')])
        .when(createCollection('ds'))
        .thenThrows(DataIdentifierAlreadyExists, /Data Identifier already exists!/));
    it('by a deleted DID', () =>
      given([created('ds', 'DATASET'), erased])
        .when(createCollection('ds'))
        .thenThrows(DatabaseException, /A deleted DID ds with scope user.jdoe is reused/));
  });

  const register = (name: string, scope = 'user.jdoe', schema = 'generic') =>
    ({
      type: 'RegisterFile',
      data: {
        file: {
          scope,
          name,
          bytes: 7,
          adler32: 'abcdef01',
          guid: '{8AFC4F3E-2E4D-4C4B-9F16-7D3D2A1B0C9E}',
        },
        conventions: new Map(),
        nameSchema: nameSchemaOf(schema),
      },
      metadata: metadata('jdoe'),
    }) as const;

  describe('when a file is registered', () => {
    it('registers a new file with its facts', () =>
      given([])
        .when(register('f1'))
        .then([
          created('f1', 'FILE', {
            bytes: 7,
            adler32: 'abcdef01',
            events: null,
            guid: '8afc4f3e2e4d4c4b9f167d3d2a1b0c9e',
          }),
        ]));
    it('reuses an existing file as it is', () =>
      given([created('f1', 'FILE', { bytes: 99 })])
        .when(register('f1'))
        .thenNothingHappened());
    it('refuses a name that is not a file', () =>
      given([created('f1', 'DATASET')])
        .when(register('f1'))
        .thenThrows(UnsupportedOperation, /is a DATASET, not a file/));
  });

  describe('refuses a scope or name that would climb out of an RSE as a path, whatever the schema', () => {
    for (const name of ['x/../../../../../outside/t1', '..', '.', 'a/./b', 'a//b', 'a/', '/', '//a', 'a/..'])
      it(`a file named ${JSON.stringify(name)}`, () =>
        given([])
          .when(register(name))
          .thenThrows(InvalidObject, /^Problem validating name: .*(path segment|does not match)/));
    for (const scope of ['..', '.', 'user..jdoe', 'user.', 'group.x..'])
      it(`a file in the scope ${JSON.stringify(scope)}`, () =>
        given([])
          .when(register('f1', scope))
          .thenThrows(InvalidObject, /^Problem validating scope: .*path segment/));
    it('a collection named with `..`, even as an existing DID would be reused', () =>
      given([])
        .when(createCollection('a/../../b'))
        .thenThrows(InvalidObject, /Problem validating name: 'a\/\.\.\/\.\.\/b' holds the path segment '\.\.'/));
    it('an existing file registered again under a climbing name (stored before names were checked)', () =>
      given([created('x/../t1', 'FILE')])
        .when(register('x/../t1'))
        .thenThrows(InvalidObject, /path segment '\.\.'/));
    it('accepts a name with dots inside segments and one leading slash (DIRAC, Belle II)', () =>
      given([])
        .when(register('/belle/mc/..hidden/f...1'))
        .then([
          created('/belle/mc/..hidden/f...1', 'FILE', {
            bytes: 7,
            adler32: 'abcdef01',
            events: null,
            guid: '8afc4f3e2e4d4c4b9f167d3d2a1b0c9e',
          }),
        ]));
  });

  describe('follows the configured policy schema (policy.schema)', () => {
    it('the generic schema takes a name with `/`', () =>
      given([])
        .when(register('dir/f1'))
        .then([
          created('dir/f1', 'FILE', {
            bytes: 7,
            adler32: 'abcdef01',
            events: null,
            guid: '8afc4f3e2e4d4c4b9f167d3d2a1b0c9e',
          }),
        ]));
    it('the atlas schema refuses it', () =>
      given([])
        .when(register('dir/f1', 'user.jdoe', 'atlas'))
        .thenThrows(InvalidObject, /Problem validating name: 'dir\/f1' does not match/));
    it('an unknown schema is the generic one', () =>
      given([])
        .when(register('f1', 'a'.repeat(26), 'nosuchschema'))
        .thenThrows(InvalidObject, /Problem validating scope: .* is too long \(at most 25 characters\)/));
  });
});

describe('DID decider: status (behaviour rules 3 and 5)', () => {
  const status = (name: string, open: boolean, descendantTotals = NO_TOTALS) =>
    ({
      type: 'SetDidStatus',
      data: { scope: 'user.jdoe', name, open, descendantTotals },
      metadata: metadata(),
    }) as const;
  const withFiles: DidEvent[] = [
    created('ds', 'DATASET'),
    {
      type: 'DidsAttached',
      data: {
        scope: 'user.jdoe',
        name: 'ds',
        didType: 'DATASET',
        children: [fileEntry('f1'), fileEntry('f2', { bytes: 5, events: null })],
        totals: { length: 2, bytes: 105, events: 10 },
        attachedAt: AT,
      },
    },
  ];

  it('closing a dataset fixes length, bytes and events from its files (rule 5)', () =>
    given(withFiles)
      .when(status('ds', false))
      .then([
        {
          type: 'DidClosed',
          data: { scope: 'user.jdoe', name: 'ds', totals: { length: 2, bytes: 105, events: 10 }, closedAt: AT },
        },
      ]));

  describe('closing a collection without files records its totals', () => {
    it('zeros for an empty dataset', () =>
      given([created('ds', 'DATASET')])
        .when(status('ds', false))
        .then([
          {
            type: 'DidClosed',
            data: { scope: 'user.jdoe', name: 'ds', totals: { length: 0, bytes: 0, events: 0 }, closedAt: AT },
          },
        ]));
    it('the totals of the datasets below a container', () =>
      given([created('cnt', 'CONTAINER')])
        .when(status('cnt', false, { length: 7, bytes: 700, events: null }))
        .then([
          {
            type: 'DidClosed',
            data: { scope: 'user.jdoe', name: 'cnt', totals: { length: 7, bytes: 700, events: 0 }, closedAt: AT },
          },
        ]));
  });

  describe('changes the status only to the other one, and never of files (rule 3)', () => {
    const closed = [
      ...withFiles,
      {
        type: 'DidClosed',
        data: { scope: 'user.jdoe', name: 'ds', totals: { length: 2, bytes: 105, events: 10 }, closedAt: AT },
      } as DidEvent,
    ];
    it('refuses to close a closed dataset', () =>
      given(closed)
        .when(status('ds', false))
        .thenThrows(UnsupportedOperation, /The status of the data identifier 'user.jdoe:ds' cannot be changed/));
    it('refuses to open an open dataset', () =>
      given(withFiles)
        .when(status('ds', true))
        .thenThrows(UnsupportedOperation, /cannot be changed/));
    it('reopens a closed dataset', () =>
      given(closed)
        .when(status('ds', true))
        .then([{ type: 'DidReopened', data: { scope: 'user.jdoe', name: 'ds', reopenedAt: AT } }]));
    it('refuses to close a file', () =>
      given([created('f', 'FILE')])
        .when(status('f', false))
        .thenThrows(UnsupportedOperation, /cannot be changed/));
    it('refuses a missing DID', () =>
      given([])
        .when(status('ds', false))
        .thenThrows(DataIdentifierNotFound, /not found/));
  });
});

describe('DID decider: followers, resurrection, expiry', () => {
  const follow = (type: 'FollowDid' | 'UnfollowDid', account = 'alice') =>
    ({ type, data: { scope: 'user.jdoe', name: 'ds', account }, metadata: metadata() }) as const;

  describe('when an account follows a DID', () => {
    const followed: DidEvent = {
      type: 'DidFollowed',
      data: { scope: 'user.jdoe', name: 'ds', didType: 'DATASET', account: 'alice', followedAt: AT },
    };
    it('follows it', () =>
      given([created('ds', 'DATASET')])
        .when(follow('FollowDid'))
        .then([followed]));
    it('follows it only once', () =>
      given([created('ds', 'DATASET'), followed])
        .when(follow('FollowDid'))
        .thenThrows(Duplicate, /already follows/));
    it('unfollows it', () =>
      given([created('ds', 'DATASET'), followed])
        .when(follow('UnfollowDid'))
        .then([{ type: 'DidUnfollowed', data: { scope: 'user.jdoe', name: 'ds', account: 'alice' } }]));
    it('unfollows quietly a DID it does not follow', () =>
      given([created('ds', 'DATASET')])
        .when(follow('UnfollowDid'))
        .thenNothingHappened());
    it('refuses a missing DID', () => given([]).when(follow('FollowDid')).thenThrows(DataIdentifierNotFound));
  });

  const resurrect = { type: 'ResurrectDid', data: { scope: 'user.jdoe', name: 'ds' }, metadata: metadata() } as const;

  describe('when a DID is resurrected', () => {
    it('brings back a deleted collection without its content', () =>
      given([
        created('ds', 'DATASET', { expiredAt: EARLIER }),
        { type: 'DidClosed', data: { scope: 'user.jdoe', name: 'ds', totals: NO_TOTALS, closedAt: AT } },
        erased,
      ])
        .when(resurrect)
        .then([
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
                isOpen: false,
                closedAt: AT,
                columns: { is_new: true },
              },
              resurrectedAt: AT,
            },
          },
        ]));
    it('clears a passed expiry of a live one', () =>
      given([created('ds', 'DATASET', { expiredAt: EARLIER })])
        .when(resurrect)
        .then([
          { type: 'DidResurrected', data: { scope: 'user.jdoe', name: 'ds', restored: null, resurrectedAt: AT } },
        ]));
    it('refuses a DID whose expiry has not passed', () =>
      given([created('ds', 'DATASET', { expiredAt: LATER })])
        .when(resurrect)
        .thenThrows(DataIdentifierNotFound, /Deleted Data identifier 'user.jdoe:ds' not found/));
    it('refuses a missing DID', () => given([]).when(resurrect).thenThrows(DataIdentifierNotFound));
  });

  it('brings an erased collection back to life as the state after resurrection shows', () => {
    const events: DidEvent[] = [created('ds', 'DATASET', { expiredAt: EARLIER }), erased];
    const state = [
      ...events,
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
            columns: {},
          },
          resurrectedAt: AT,
        },
      } as DidEvent,
    ].reduce(evolveDid, initialDid());
    expect(state.status).to.equal('Live');
    expect(state.status === 'Live' && state.record.expiredAt).to.equal(null);
  });

  const erase = (name: string) =>
    ({ type: 'EraseExpiredDid', data: { scope: 'user.jdoe', name }, metadata: metadata('root') }) as const;
  const ruleOn = (name: string, locked: boolean): DidEvent => ({
    type: 'DidRuleAttached',
    data: {
      scope: 'user.jdoe',
      name,
      ruleId: 'r1',
      rule: { account: 'jdoe', rseExpression: 'SITE', copies: 1, locked },
    },
  });

  describe('when an expired DID is erased (rule 7)', () => {
    it('erases a collection with its content', () =>
      given([
        created('ds', 'DATASET', { expiredAt: EARLIER }),
        {
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'DATASET',
            children: [fileEntry('f1')],
            totals: { length: 1, bytes: 100, events: 10 },
            attachedAt: AT,
          },
        },
      ])
        .when(erase('ds'))
        .then([
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
        ]));
    it('only clears the expiry of a file', () =>
      given([created('f1', 'FILE', { expiredAt: EARLIER })])
        .when(erase('f1'))
        .then([{ type: 'FileExpiryCleared', data: { scope: 'user.jdoe', name: 'f1', clearedAt: AT } }]));
  });

  describe('leaves alone what has not expired or has rules (rule 7)', () => {
    it('a DID whose expiry has not passed', () =>
      given([created('ds', 'DATASET', { expiredAt: LATER })])
        .when(erase('ds'))
        .thenThrows(UnsupportedOperation, /has not expired/));
    it('a DID without an expiry', () =>
      given([created('ds', 'DATASET')])
        .when(erase('ds'))
        .thenThrows(UnsupportedOperation, /has not expired/));
    it('a DID with a locked rule', () =>
      given([created('ds', 'DATASET', { expiredAt: EARLIER }), ruleOn('ds', true)])
        .when(erase('ds'))
        .thenThrows(UnsupportedOperation, /locked replication rule/));
    it('a DID with rules still', () =>
      given([created('ds', 'DATASET', { expiredAt: EARLIER }), ruleOn('ds', false)])
        .when(erase('ds'))
        .thenThrows(UnsupportedOperation, /still has replication rules/));
  });

  describe('when a file is marked LOST', () => {
    const setLost = {
      type: 'SetFileAvailability',
      data: { scope: 'user.jdoe', name: 'f1', availability: 'LOST' },
      metadata: metadata(),
    } as const;
    it('marks it', () =>
      given([created('f1', 'FILE')])
        .when(setLost)
        .then([
          {
            type: 'FileAvailabilityChanged',
            data: { scope: 'user.jdoe', name: 'f1', availability: 'LOST', changedAt: AT },
          },
        ]));
    it('refuses a collection', () =>
      given([created('ds', 'DATASET')])
        .when({ ...setLost, data: { ...setLost.data, name: 'ds' } })
        .thenThrows(UnsupportedOperation, /is not a file/));
  });

  it('keeps a container entry of a collection as the attach left it', () => {
    const state = [
      created('cnt', 'CONTAINER'),
      {
        type: 'DidsAttached',
        data: {
          scope: 'user.jdoe',
          name: 'cnt',
          didType: 'CONTAINER',
          children: [collectionEntry('ds', 'DATASET')],
          totals: { length: 1, bytes: null, events: null },
          attachedAt: AT,
        },
      } as DidEvent,
    ].reduce(evolveDid, initialDid());
    expect(state.status === 'Live' && [...state.content.children.keys()]).to.deep.equal(['user.jdoe:ds']);
  });
});
