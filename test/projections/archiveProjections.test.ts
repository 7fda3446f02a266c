import { expect } from 'chai';
import { didStreamName, type DidEvent } from '../../domain/did/did.ts';
import {
  archiveContentsCollection,
  type ArchiveContentDocument,
} from '../../projections/did/archiveContentsProjection.ts';
import { didsCollection, type DidDocument } from '../../projections/did/didsProjection.ts';
import { AT } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';
import { projectEvents } from '../support/projectionHarness.ts';

/** given(events).then(read models) for archives: the rows of `archive_contents` and the marks on `dids`. */
const given = (events: DidEvent[], options: { twice?: boolean } = {}) =>
  projectEvents(
    'archive-projections-',
    events.map((event) => ({
      stream: didStreamName(event.data.scope, event.data.name),
      type: event.type,
      data: event.data,
    })),
    async (read) => ({
      rows: (await read<ArchiveContentDocument>(archiveContentsCollection)).map((row) => [
        row.archiveKey,
        row.childKey,
      ]),
      dids: Object.fromEntries(
        (await read<DidDocument>(didsCollection)).map((did) => [did.name, [did.is_archive, did.constituent]]),
      ),
    }),
    options,
  );

const ARCHIVE = { scope: 'user.jdoe', name: 'logs.zip' };

const history: DidEvent[] = [
  created('logs.zip', 'FILE'),
  created('a.log', 'FILE'),
  created('ds', 'DATASET'),
  {
    type: 'ArchiveContentAdded',
    data: { ...ARCHIVE, constituents: [fileEntry('a.log'), fileEntry('b.log')], addedAt: AT },
  },
  { type: 'FileMarkedConstituent', data: { scope: 'user.jdoe', name: 'a.log', archive: ARCHIVE, markedAt: AT } },
  { type: 'DatasetMarkedArchive', data: { scope: 'user.jdoe', name: 'ds', archive: ARCHIVE, markedAt: AT } },
];

describe('Projections: archives', () => {
  it('keep a row per archive and constituent, and the marks of archives, constituents and datasets', async () =>
    expect(await given(history, { twice: true })).to.deep.equal({
      rows: [
        ['user.jdoe:logs.zip', 'user.jdoe:a.log'],
        ['user.jdoe:logs.zip', 'user.jdoe:b.log'],
      ],
      dids: { 'a.log': [undefined, true], ds: [true, undefined], 'logs.zip': [true, undefined] },
    }));

  it('drop an erased archive’s rows with it', async () => {
    const erased: DidEvent = {
      type: 'DidErased',
      data: {
        ...ARCHIVE,
        didType: 'FILE',
        children: [
          { scope: 'user.jdoe', name: 'a.log' },
          { scope: 'user.jdoe', name: 'b.log' },
        ],
        erasedAt: AT,
      },
    };
    expect((await given([...history, erased])).rows).to.deep.equal([]);
  });
});
