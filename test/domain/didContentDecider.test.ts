import { didDecider } from '../../domain/did/didDecider.ts';
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

const given = deciderSpec(didDecider);

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

  it('refuses what may not go into a dataset', () => {
    const dataset = [created('ds', 'DATASET')];
    given(dataset)
      .when(attach('ds', [child('sub', collectionFacts('DATASET'))]))
      .thenThrows(UnsupportedOperation, /of type DATASET cannot be added to a dataset/);
    given(dataset)
      .when(attach('ds', [{ request: { scope: 'user.jdoe', name: 'missing' }, facts: undefined }]))
      .thenThrows(DataIdentifierNotFound, /'user.jdoe:missing' not found/);
    given(dataset)
      .when(attach('ds', [child('lost', fileFacts({ availability: 'LOST' }))]))
      .thenThrows(UnsupportedOperation, /File user.jdoe:lost is LOST and cannot be attached/);
  });

  it('refuses files whose size or checksums differ from the catalogue (rule 4)', () => {
    const dataset = [created('ds', 'DATASET')];
    given(dataset)
      .when(attach('ds', [child('f1', fileFacts(), { bytes: 101 })]))
      .thenThrows(FileConsistencyMismatch, /bytes mismatch for 'user.jdoe:f1': 101!=100/);
    given(dataset)
      .when(attach('ds', [child('f1', fileFacts(), { adler32: 'deadbeef' })]))
      .thenThrows(FileConsistencyMismatch, /adler32 mismatch .*deadbeef!=0cc737eb/);
    given(dataset)
      .when(attach('ds', [child('f1', fileFacts(), { md5: '0'.repeat(32) })]))
      .thenThrows(FileConsistencyMismatch, /md5 mismatch .*!=None/);
    given(dataset)
      .when(attach('ds', [child('f1', fileFacts(), { bytes: 100, adler32: '0cc737eb' })]))
      .then([attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)]);
  });

  it('refuses a file attached twice unless duplicates are ignored (rule 4)', () => {
    const history = [created('ds', 'DATASET'), attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)];
    given(history)
      .when(attach('ds', [child('f1'), child('f2')]))
      .thenThrows(FileAlreadyExists, /user.jdoe:f1/);
    given(history)
      .when(attach('ds', [child('f1'), child('f2')], { ignoreDuplicates: true }))
      .then([attached('ds', 'DATASET', [fileEntry('f2')], 2, 200, 20)]);
    given(history)
      .when(attach('ds', [child('f1')], { ignoreDuplicates: true }))
      .thenNothingHappened();
  });

  it('puts datasets or containers into containers, never files, mixtures, itself or its ancestors (rule 2)', () => {
    const container = [created('cnt', 'CONTAINER')];
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
      ]);
    given(container)
      .when(attach('cnt', [child('f1')]))
      .thenThrows(UnsupportedOperation, /Adding a file \(user.jdoe:f1\) to a container \(user.jdoe:cnt\) is forbidden/);
    given(container)
      .when(attach('cnt', [child('ds1', collectionFacts('DATASET')), child('c2', collectionFacts('CONTAINER'))]))
      .thenThrows(UnsupportedOperation, /Mixed collection is not allowed/);
    given(container)
      .when(attach('cnt', [child('cnt', collectionFacts('CONTAINER'))]))
      .thenThrows(UnsupportedOperation, /Self-append is not valid!/);
    given(container)
      .when(attach('cnt', [child('top', collectionFacts('CONTAINER'))], { ancestors: ['user.jdoe:top'] }))
      .thenThrows(
        UnsupportedOperation,
        /Circular attachment detected. user.jdoe:top is already a parent of user.jdoe:cnt/,
      );
  });

  it('refuses a collection attached twice to a container unless duplicates are ignored', () => {
    const history = [
      created('cnt', 'CONTAINER'),
      attached('cnt', 'CONTAINER', [collectionEntry('ds1', 'DATASET')], 1, null, null),
    ];
    given(history)
      .when(attach('cnt', [child('ds1', collectionFacts('DATASET'))]))
      .thenThrows(DuplicateContent, /user.jdoe:ds1/);
    given(history)
      .when(attach('cnt', [child('ds1', collectionFacts('DATASET'))], { ignoreDuplicates: true }))
      .thenNothingHappened();
  });

  it('attaches nothing to a file, a closed collection or a missing one (rule 3)', () => {
    given([created('f', 'FILE')])
      .when(attach('f', [child('f1')]))
      .thenThrows(UnsupportedOperation, /'user.jdoe:f' is a file/);
    given([
      created('ds', 'DATASET'),
      {
        type: 'DidClosed',
        data: { scope: 'user.jdoe', name: 'ds', totals: { length: 0, bytes: 0, events: 0 }, closedAt: AT },
      },
    ])
      .when(attach('ds', [child('f1')]))
      .thenThrows(UnsupportedOperation, /'user.jdoe:ds' is closed/);
    given([])
      .when(attach('ds', [child('f1')]))
      .thenThrows(DataIdentifierNotFound, /'user.jdoe:ds' not found/);
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

  it('refuses to detach what is not there', () => {
    const history = [created('ds', 'DATASET'), attached('ds', 'DATASET', [fileEntry('f1')], 1, 100, 10)];
    given(history)
      .when(detach(['f9']))
      .thenThrows(DataIdentifierNotFound, /'user.jdoe:f9' not found under 'user.jdoe:ds'/);
    given(history)
      .when(detach(['f1', 'f1']))
      .thenThrows(DataIdentifierNotFound, /not found under/);
    given(history)
      .when(detach(['ds']))
      .thenThrows(UnsupportedOperation, /Self-detach is not valid./);
    given([created('ds', 'DATASET')])
      .when(detach(['f1']))
      .thenThrows(DataIdentifierNotFound, /has no child data identifiers/);
    given([created('f', 'FILE')])
      .when(detach(['f1'], 'f'))
      .thenThrows(DataIdentifierNotFound, /'user.jdoe:f' not found/);
  });
});
