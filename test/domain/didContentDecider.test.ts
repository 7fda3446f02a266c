import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { AttachCandidate } from '../../domain/did/didContent.ts';
import type { ContentEntry, DidEvent } from '../../domain/did/did.ts';
import {
  DataIdentifierNotFound,
  DuplicateContent,
  FileAlreadyExists,
  FileConsistencyMismatch,
  UnsupportedOperation,
} from '../../domain/shared/errors.ts';
import { collectionEntry, collectionFacts, created, fileEntry, fileFacts } from '../support/didEvents.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

/** DID commands as production decides them: on the DID's stream, whose decider hands them to the DID decider. */
const given = deciderSpec(didStreamDecider);

const attach = (
  name: string,
  children: AttachCandidate[],
  options: { ignoreDuplicates?: boolean; ancestors?: string[] } = {},
) =>
  ({
    type: 'AttachDids',
    data: {
      scope: 'user.jdoe',
      name,
      children,
      ignoreDuplicates: options.ignoreDuplicates ?? false,
      ancestors: new Set(options.ancestors ?? []),
    },
    metadata: metadata(),
  }) as const;

const child = (name: string, facts = fileFacts(), claimed: Record<string, unknown> = {}): AttachCandidate => ({
  request: { scope: 'user.jdoe', name, ...claimed },
  facts,
});

const attached = (
  name: string,
  didType: 'DATASET' | 'CONTAINER',
  children: ContentEntry[],
  length: number,
  bytes: number | null,
  events: number | null,
): DidEvent => ({
  type: 'DidsAttached',
  data: { scope: 'user.jdoe', name, didType, children, totals: { length, bytes, events }, attachedAt: AT },
});

describe('DID decider: attach and detach (behaviour rules 2-4)', () => {
  it('attaches files to a dataset in one event that carries the totals', () =>
    given([created('ds', 'DATASET')])
      .when(attach('ds', [child('f1'), child('f2', fileFacts({ bytes: 50, events: 1 })), child('f1')]))
      .then([attached('ds', 'DATASET', [fileEntry('f1'), fileEntry('f2', { bytes: 50, events: 1 })], 2, 150, 11)]));

  it('adds to the totals on a later attach', () =>
    given([created('ds', 'DATASET'), attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)])
      .when(attach('ds', [child('f2')]))
      .then([attached('ds', 'DATASET', [fileEntry('f2')], 2, 200, 20)]));

  describe('refuses what may not go into a dataset', () => {
    const dataset = [created('ds', 'DATASET')];
    it('a dataset', () =>
      given(dataset)
        .when(attach('ds', [child('sub', collectionFacts('DATASET'))]))
        .thenThrows(UnsupportedOperation, /of type DATASET cannot be added to a dataset/));
    it('a DID that does not exist', () =>
      given(dataset)
        .when(attach('ds', [{ request: { scope: 'user.jdoe', name: 'missing' }, facts: undefined }]))
        .thenThrows(DataIdentifierNotFound, /'user.jdoe:missing' not found/));
    it('a LOST file', () =>
      given(dataset)
        .when(attach('ds', [child('lost', fileFacts({ availability: 'LOST' }))]))
        .thenThrows(UnsupportedOperation, /File user.jdoe:lost is LOST and cannot be attached/));
  });

  describe('checks attached files against the catalogue (rule 4)', () => {
    const dataset = [created('ds', 'DATASET')];
    it('refuses another size', () =>
      given(dataset)
        .when(attach('ds', [child('f1', fileFacts(), { bytes: 101 })]))
        .thenThrows(FileConsistencyMismatch, /bytes mismatch for 'user.jdoe:f1': 101!=100/));
    it('refuses another adler32', () =>
      given(dataset)
        .when(attach('ds', [child('f1', fileFacts(), { adler32: 'deadbeef' })]))
        .thenThrows(FileConsistencyMismatch, /adler32 mismatch .*deadbeef!=0cc737eb/));
    it('refuses an md5 the catalogue does not have', () =>
      given(dataset)
        .when(attach('ds', [child('f1', fileFacts(), { md5: '0'.repeat(32) })]))
        .thenThrows(FileConsistencyMismatch, /md5 mismatch .*!=None/));
    it('attaches a file whose size and checksum match', () =>
      given(dataset)
        .when(attach('ds', [child('f1', fileFacts(), { bytes: 100, adler32: '0cc737eb' })]))
        .then([attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)]));
  });

  describe('given a file attached already (rule 4)', () => {
    const history = [created('ds', 'DATASET'), attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)];
    it('refuses it again', () =>
      given(history)
        .when(attach('ds', [child('f1'), child('f2')]))
        .thenThrows(FileAlreadyExists, /user.jdoe:f1/));
    it('attaches the others when duplicates are ignored', () =>
      given(history)
        .when(attach('ds', [child('f1'), child('f2')], { ignoreDuplicates: true }))
        .then([attached('ds', 'DATASET', [fileEntry('f2')], 2, 200, 20)]));
    it('attaches nothing when it was the only one and duplicates are ignored', () =>
      given(history)
        .when(attach('ds', [child('f1')], { ignoreDuplicates: true }))
        .thenNothingHappened());
  });

  describe('puts datasets or containers into containers (rule 2)', () => {
    const container = [created('cnt', 'CONTAINER')];
    it('attaches datasets', () =>
      given(container)
        .when(attach('cnt', [child('ds1', collectionFacts('DATASET')), child('ds2', collectionFacts('DATASET'))]))
        .then([
          attached(
            'cnt',
            'CONTAINER',
            [collectionEntry('ds1', 'DATASET'), collectionEntry('ds2', 'DATASET')],
            2,
            null,
            null,
          ),
        ]));
    it('never a file', () =>
      given(container)
        .when(attach('cnt', [child('f1')]))
        .thenThrows(
          UnsupportedOperation,
          /Adding a file \(user.jdoe:f1\) to a container \(user.jdoe:cnt\) is forbidden/,
        ));
    it('never a mixture of datasets and containers', () =>
      given(container)
        .when(attach('cnt', [child('ds1', collectionFacts('DATASET')), child('c2', collectionFacts('CONTAINER'))]))
        .thenThrows(UnsupportedOperation, /Mixed collection is not allowed/));
    it('never the container itself', () =>
      given(container)
        .when(attach('cnt', [child('cnt', collectionFacts('CONTAINER'))]))
        .thenThrows(UnsupportedOperation, /Self-append is not valid!/));
    it('never one of its ancestors', () =>
      given(container)
        .when(attach('cnt', [child('top', collectionFacts('CONTAINER'))], { ancestors: ['user.jdoe:top'] }))
        .thenThrows(
          UnsupportedOperation,
          /Circular attachment detected. user.jdoe:top is already a parent of user.jdoe:cnt/,
        ));
  });

  describe('given a collection attached already to a container', () => {
    const history = [
      created('cnt', 'CONTAINER'),
      attached('cnt', 'CONTAINER', [collectionEntry('ds1', 'DATASET')], 1, null, null),
    ];
    it('refuses it again', () =>
      given(history)
        .when(attach('cnt', [child('ds1', collectionFacts('DATASET'))]))
        .thenThrows(DuplicateContent, /user.jdoe:ds1/));
    it('attaches nothing when duplicates are ignored', () =>
      given(history)
        .when(attach('cnt', [child('ds1', collectionFacts('DATASET'))], { ignoreDuplicates: true }))
        .thenNothingHappened());
  });

  describe('attaches nothing (rule 3)', () => {
    it('to a file', () =>
      given([created('f', 'FILE')])
        .when(attach('f', [child('f1')]))
        .thenThrows(UnsupportedOperation, /'user.jdoe:f' is a file/));
    it('to a closed collection', () =>
      given([
        created('ds', 'DATASET'),
        {
          type: 'DidClosed',
          data: { scope: 'user.jdoe', name: 'ds', totals: { length: 0, bytes: 0, events: 0 }, closedAt: AT },
        },
      ])
        .when(attach('ds', [child('f1')]))
        .thenThrows(UnsupportedOperation, /'user.jdoe:ds' is closed/));
    it('to a missing collection', () =>
      given([])
        .when(attach('ds', [child('f1')]))
        .thenThrows(DataIdentifierNotFound, /'user.jdoe:ds' not found/));
  });

  const detach = (names: string[], parent = 'ds') =>
    ({
      type: 'DetachDids',
      data: { scope: 'user.jdoe', name: parent, children: names.map((name) => ({ scope: 'user.jdoe', name })) },
      metadata: metadata(),
    }) as const;

  it('detaches children, also from a closed collection, and lowers the totals (rule 3)', () =>
    given([
      created('ds', 'DATASET'),
      attached('ds', 'DATASET', [fileEntry('f1'), fileEntry('f2')], 2, 200, 20),
      {
        type: 'DidClosed',
        data: { scope: 'user.jdoe', name: 'ds', totals: { length: 2, bytes: 200, events: 20 }, closedAt: AT },
      },
    ])
      .when(detach(['f1']))
      .then([
        {
          type: 'DidsDetached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'DATASET',
            children: [fileEntry('f1')],
            totals: { length: 1, bytes: 100, events: 10 },
            detachedAt: AT,
          },
        },
      ]));

  describe('refuses to detach what is not there', () => {
    const history = [created('ds', 'DATASET'), attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)];
    it('a child not attached', () =>
      given(history)
        .when(detach(['f9']))
        .thenThrows(DataIdentifierNotFound, /'user.jdoe:f9' not found under 'user.jdoe:ds'/));
    it('a child named twice', () =>
      given(history)
        .when(detach(['f1', 'f1']))
        .thenThrows(DataIdentifierNotFound, /not found under/));
    it('the collection itself', () =>
      given(history)
        .when(detach(['ds']))
        .thenThrows(UnsupportedOperation, /Self-detach is not valid./));
    it('any child of an empty collection', () =>
      given([created('ds', 'DATASET')])
        .when(detach(['f1']))
        .thenThrows(DataIdentifierNotFound, /has no child data identifiers/));
    it('anything under a file', () =>
      given([created('f', 'FILE')])
        .when(detach(['f1'], 'f'))
        .thenThrows(DataIdentifierNotFound, /'user.jdoe:f' not found/));
  });
});
