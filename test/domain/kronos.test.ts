import { expect } from 'chai';
import { kronos, readOfTrace, type TraceRead } from '../../domain/trace/kronos.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const AT = '2024-06-01T12:00:00.000Z';
const LATER = '2024-06-01T12:00:05.000Z';

/** A trace as `rucio download` sends it for a file it downloaded (downloadclient.py). */
const download = (extra: object = {}) => ({
  hostname: 'laptop',
  localSite: 'ROAMING',
  account: 'jdoe',
  eventType: 'download',
  eventVersion: 'api_39.4.2',
  uuid: '0123456789abcdef0123456789abcdef',
  scope: 'user.jdoe',
  filename: 'f1',
  datasetScope: '',
  dataset: '',
  filesize: 100,
  remoteSite: 'SITE_DISK',
  clientState: 'DONE',
  stateReason: 'OK',
  protocol: 'file',
  ...extra,
});

describe('Traces: the read a trace reports (Rucio’s trace documents as kronos reads them)', () => {
  it('reads a finished download as a read of the file on the RSE it came from', () =>
    expect(readOfTrace(download(), AT)).to.deep.equal({
      kind: 'file',
      scope: 'user.jdoe',
      name: 'f1',
      rses: ['SITE_DISK'],
      at: AT,
    }));

  it('reads a pilot’s get on several RSEs (remoteSite comma-separated), by `name` when it has no `filename`', () =>
    expect(
      readOfTrace(
        { eventType: 'get_sm', clientState: 'DONE', scope: 's', name: 'f', remoteSite: 'A_DISK, B_DISK' },
        AT,
      ),
    ).to.deep.equal({ kind: 'file', scope: 's', name: 'f', rses: ['A_DISK', 'B_DISK'], at: AT }));

  it('reads a touch of a dataset as a read of the dataset', () =>
    expect(
      readOfTrace({ eventType: 'touch', clientState: 'DONE', account: 'jdoe', datasetScope: 's', dataset: 'ds' }, AT),
    ).to.deep.equal({ kind: 'dataset', scope: 's', name: 'ds', rses: [], at: AT }));

  it('reads no failed download, no download that did not reach an RSE, and no upload', () => {
    expect(readOfTrace(download({ clientState: 'FAILED' }), AT)).to.equal(undefined);
    expect(readOfTrace(download({ clientState: 'FILE_NOT_FOUND', remoteSite: undefined }), AT)).to.equal(undefined);
    expect(readOfTrace(download({ eventType: 'upload' }), AT)).to.equal(undefined);
  });

  it('reads no event-service get, and no trace whose names cannot be a DID’s', () => {
    expect(readOfTrace(download({ eventType: 'get_es' }), AT)).to.equal(undefined);
    expect(readOfTrace(download({ scope: 'a b' }), AT)).to.equal(undefined);
    expect(readOfTrace(download({ filename: 7 }), AT)).to.equal(undefined);
  });
});

const given = workflowSpec(kronos);
const rseIds = new Map([
  ['SITE_DISK', 'a'.repeat(32)],
  ['OTHER_DISK', 'b'.repeat(32)],
]);
const fileRead = (name: string, at = AT, rses = ['SITE_DISK']): TraceRead => ({
  kind: 'file',
  scope: 's',
  name,
  rses,
  at,
});

describe('Kronos: a batch of reads becomes one record per replica and per dataset', () => {
  it('counts the reads of each replica, with the latest time', () =>
    given({ rseIds, parents: new Map() })
      .when([fileRead('f1'), fileRead('f1', LATER), fileRead('f2')])
      .then([
        {
          type: 'RecordReplicaReads',
          data: { scope: 's', name: 'f1', rse: 'SITE_DISK', rseId: 'a'.repeat(32), accesses: 2, accessedAt: LATER },
        },
        {
          type: 'RecordReplicaReads',
          data: { scope: 's', name: 'f2', rse: 'SITE_DISK', rseId: 'a'.repeat(32), accesses: 1, accessedAt: AT },
        },
      ]));

  it('records a read of every dataset a read file is in, once per batch as Rucio counts it', () =>
    given({ rseIds, parents: new Map([['s:f1', [{ scope: 's', name: 'ds' }]]]) })
      .when([fileRead('f1'), fileRead('f1', LATER), { kind: 'dataset', scope: 's', name: 'ds', rses: [], at: AT }])
      .then([
        {
          type: 'RecordReplicaReads',
          data: { scope: 's', name: 'f1', rse: 'SITE_DISK', rseId: 'a'.repeat(32), accesses: 2, accessedAt: LATER },
        },
        { type: 'RecordDatasetReads', data: { scope: 's', name: 'ds', accessedAt: LATER, accesses: 1 } },
      ]));

  it('skips reads on an RSE that does not exist, and their datasets', () =>
    given({ rseIds, parents: new Map([['s:f1', [{ scope: 's', name: 'ds' }]]]) })
      .when([fileRead('f1', AT, ['GONE_DISK'])])
      .then([{ type: 'Skipped', data: { what: 'reads on GONE_DISK', reason: 'RSENotFound' } }]));

  it('records nothing for an empty batch', () => given({ rseIds, parents: new Map() }).when([]).thenNothing());
});
