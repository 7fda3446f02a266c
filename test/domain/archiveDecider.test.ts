import { expect } from 'chai';
import { isArchiveName } from '../../domain/did/archiveContent.ts';
import type { AttachCandidate } from '../../domain/did/didContent.ts';
import type { DidEvent } from '../../domain/did/did.ts';
import type { DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import { DataIdentifierNotFound, FileAlreadyExists, UnsupportedOperation } from '../../domain/shared/errors.ts';
import { collectionFacts, created, fileEntry, fileFacts } from '../support/didEvents.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

/** Archives as production decides them: on the DID streams of the archive, its constituents and its datasets. */
const given = deciderSpec(didStreamDecider);

const ARCHIVE = { scope: 'user.jdoe', name: 'logs.tar.gz' };

const child = (name: string, facts = fileFacts()): AttachCandidate => ({
  request: { scope: 'user.jdoe', name },
  facts,
});

const addContent = (children: AttachCandidate[], ignoreDuplicates = false, name = ARCHIVE.name): DidStreamCommand => ({
  type: 'AddArchiveContent',
  data: { scope: 'user.jdoe', name, children, ignoreDuplicates },
  metadata: metadata(),
});

const contentAdded = (...names: string[]): DidEvent => ({
  type: 'ArchiveContentAdded',
  data: { ...ARCHIVE, constituents: names.map((name) => fileEntry(name)), addedAt: AT },
});

const markConstituent = (name: string): DidStreamCommand => ({
  type: 'MarkConstituent',
  data: { scope: 'user.jdoe', name, archive: ARCHIVE },
  metadata: metadata(),
});

const markDataset = (name: string): DidStreamCommand => ({
  type: 'MarkDatasetArchive',
  data: { scope: 'user.jdoe', name, archive: ARCHIVE },
  metadata: metadata(),
});

const datasetMarked = (name: string): DidEvent => ({
  type: 'DatasetMarkedArchive',
  data: { scope: 'user.jdoe', name, archive: ARCHIVE, markedAt: AT },
});

describe('Archives: which names are archives (Rucio’s is_archive)', () => {
  for (const name of [
    'a.zip',
    'a.ZIP',
    'a.zipx',
    'a.tar.gz',
    'a.tgz',
    'a.tar.Z',
    'a.tar.bz2',
    'a.tbz2',
    'a.zip.1',
    'a.tgz.2.3',
  ])
    it(`${name} is one`, () => expect(isArchiveName(name)).to.equal(true));
  for (const name of ['a.tar', 'a.txt', 'zip', 'a.zip.x', 'a.gz'])
    it(`${name} is not`, () => expect(isArchiveName(name)).to.equal(false));
});

describe('Archive decider: content of an archive file', () => {
  const archive = [created(ARCHIVE.name, 'FILE')];

  it('takes files as constituents, with their size and checksums', () =>
    given(archive)
      .when(addContent([child('a.log'), child('b.log'), child('a.log')]))
      .then([contentAdded('a.log', 'b.log')]));

  it('refuses a file it already holds', () =>
    given([...archive, contentAdded('a.log')])
      .when(addContent([child('a.log'), child('b.log')]))
      .thenThrows(FileAlreadyExists, /user.jdoe:a.log are already in the archive user.jdoe:logs.tar.gz/));

  it('skips a file it already holds when told to ignore duplicates', () =>
    given([...archive, contentAdded('a.log')])
      .when(addContent([child('a.log'), child('b.log')], true))
      .then([contentAdded('b.log')]));

  it('refuses a collection', () =>
    given(archive)
      .when(addContent([child('ds', collectionFacts('DATASET'))]))
      .thenThrows(UnsupportedOperation, /user.jdoe:ds of type DATASET cannot be added to an archive/));

  it('refuses a DID that does not exist', () =>
    given(archive)
      .when(addContent([{ request: { scope: 'user.jdoe', name: 'gone' }, facts: undefined }]))
      .thenThrows(DataIdentifierNotFound, /'user.jdoe:gone' not found/));

  it('refuses itself', () =>
    given(archive)
      .when(addContent([child(ARCHIVE.name)]))
      .thenThrows(UnsupportedOperation, /Self-append/));

  it('refuses a file whose name is no archive’s', () =>
    given([created('plain.txt', 'FILE')])
      .when(addContent([child('a.log')], false, 'plain.txt'))
      .thenThrows(UnsupportedOperation, /'user.jdoe:plain.txt' is not an archive file/));

  it('refuses an archive that does not exist', () =>
    given([])
      .when(addContent([child('a.log')]))
      .thenThrows(DataIdentifierNotFound, /logs.tar.gz' not found/));
});

describe('Archive decider: constituents and the datasets of archives', () => {
  it('marks a file a constituent', () =>
    given([created('a.log', 'FILE')])
      .when(markConstituent('a.log'))
      .then([
        { type: 'FileMarkedConstituent', data: { scope: 'user.jdoe', name: 'a.log', archive: ARCHIVE, markedAt: AT } },
      ]));

  it('marks a constituent once', () =>
    given([
      created('a.log', 'FILE'),
      { type: 'FileMarkedConstituent', data: { scope: 'user.jdoe', name: 'a.log', archive: ARCHIVE, markedAt: AT } },
    ])
      .when(markConstituent('a.log'))
      .thenNothingHappened());

  it('refuses to make a dataset a constituent', () =>
    given([created('ds', 'DATASET')])
      .when(markConstituent('ds'))
      .thenThrows(UnsupportedOperation, /of type DATASET cannot be added to an archive/));

  const holding: DidEvent[] = [
    created('ds', 'DATASET'),
    {
      type: 'DidsAttached',
      data: {
        scope: 'user.jdoe',
        name: 'ds',
        didType: 'DATASET',
        children: [fileEntry(ARCHIVE.name)],
        totals: { length: 1, bytes: 100, events: 10 },
        attachedAt: AT,
      },
    },
  ];

  it('marks a dataset holding the archive', () =>
    given(holding)
      .when(markDataset('ds'))
      .then([datasetMarked('ds')]));

  it('leaves a dataset that no longer holds the archive', () =>
    given([created('ds', 'DATASET')])
      .when(markDataset('ds'))
      .thenNothingHappened());

  it('marks a dataset once', () =>
    given([...holding, datasetMarked('ds')])
      .when(markDataset('ds'))
      .thenNothingHappened());

  it('marks a dataset an archive file is attached to', () =>
    given([created('ds', 'DATASET')])
      .when({
        type: 'AttachDids',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          children: [child(ARCHIVE.name, fileFacts({ isArchive: true })), child('plain.txt')],
          ignoreDuplicates: false,
          ancestors: new Set(),
        },
        metadata: metadata(),
      })
      .then([
        {
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'DATASET',
            children: [fileEntry(ARCHIVE.name), fileEntry('plain.txt')],
            totals: { length: 2, bytes: 200, events: 20 },
            attachedAt: AT,
          },
        },
        datasetMarked('ds'),
      ]));
});

describe('Archive decider: deletion with the last replica', () => {
  const erase = (name: string): DidStreamCommand => ({
    type: 'EraseFileWithoutReplicas',
    data: { scope: 'user.jdoe', name, reason: 'last replica deleted' },
    metadata: metadata(),
  });

  it('keeps a constituent, which lives in its archives’ replicas', () =>
    given([
      created('a.log', 'FILE'),
      { type: 'FileMarkedConstituent', data: { scope: 'user.jdoe', name: 'a.log', archive: ARCHIVE, markedAt: AT } },
    ])
      .when(erase('a.log'))
      .thenNothingHappened());

  it('erases an archive naming its constituents, whose content rows go with it', () =>
    given([created(ARCHIVE.name, 'FILE'), contentAdded('a.log', 'b.log')])
      .when(erase(ARCHIVE.name))
      .then([
        {
          type: 'DidErased',
          data: {
            ...ARCHIVE,
            didType: 'FILE',
            children: [
              { scope: 'user.jdoe', name: 'a.log' },
              { scope: 'user.jdoe', name: 'b.log' },
            ],
            erasedAt: AT,
            reason: 'last replica deleted',
          },
        },
      ]));
});
