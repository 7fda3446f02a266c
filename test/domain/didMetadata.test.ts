import { expect } from 'chai';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import { managedByDidColumn } from '../../domain/did/didMetadata.ts';
import type { DidEvent } from '../../domain/did/did.ts';
import type { MetaConvention } from '../../domain/metaConvention/metaConvention.ts';
import { metaConventionDecider } from '../../domain/metaConvention/metaConventionDecider.ts';
import {
  DataIdentifierNotFound,
  Duplicate,
  InvalidMetadata,
  InvalidObject,
  InvalidValueForKey,
  KeyNotFound,
  NotImplementedError_,
  UnsupportedKeyType,
  UnsupportedOperation,
  UnsupportedValueType,
} from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata, NOW } from '../support/deciderSpec.ts';
import { created, fileEntry } from '../support/didEvents.ts';

/** DID commands as production decides them: on the DID's stream, whose decider hands them to the DID decider. */
const given = deciderSpec(didStreamDecider);

const setMeta = (
  name: string,
  meta: Record<string, unknown>,
  conventions: ReadonlyMap<string, MetaConvention> = new Map(),
) => ({ type: 'SetDidMetadata', data: { scope: 'user.jdoe', name, meta, conventions }, metadata: metadata() }) as const;

const metadataSet = (name: string, columns: Record<string, unknown>, json: Record<string, unknown>): DidEvent =>
  ({ type: 'DidMetadataSet', data: { scope: 'user.jdoe', name, columns, json, setAt: AT } }) as DidEvent;

describe('DID decider: metadata', () => {
  it('splits keys between the DID_COLUMN and JSON plugins and types column values', () =>
    given([created('ds', 'DATASET')])
      .when(
        setMeta('ds', {
          project: 'data23',
          run_number: 42,
          hidden: true,
          lifetime: 60,
          eol_at: '2030-01-31',
          colour: 'red',
          tags: ['a'],
        }),
      )
      .then([
        metadataSet(
          'ds',
          {
            project: 'data23',
            run_number: 42,
            hidden: true,
            expired_at: new Date(NOW.getTime() + 60_000).toISOString(),
            eol_at: '2030-01-31T00:00:00.000Z',
          },
          { colour: 'red', tags: ['a'] },
        ),
      ]));

  it('knows which keys the DID_COLUMN plugin manages', () => {
    expect(['project', 'length', 'lifetime', 'created_before', 'type', 'guid'].every(managedByDidColumn)).to.equal(
      true,
    );
    expect(['account', 'did_type', 'is_open', 'created_at', 'colour'].some(managedByDidColumn)).to.equal(false);
  });

  describe('refuses metadata a collection cannot take', () => {
    const dataset = [created('ds', 'DATASET')];
    it('a key with a dot', () =>
      given(dataset)
        .when(setMeta('ds', { 'a.b': 1 }))
        .thenThrows(InvalidMetadata, /Restricted character "\."/));
    it('keys without a column', () =>
      given(dataset)
        .when(setMeta('ds', { type: 'x', created_before: 'y' }))
        .thenThrows(InvalidMetadata, /Some of the keys are not accepted: \['type', 'created_before'\]/));
    it('a run number that is not an integer', () =>
      given(dataset)
        .when(setMeta('ds', { run_number: 'five' }))
        .thenThrows(InvalidValueForKey, /key run_number is not an integer/));
    it('a value longer than its column', () =>
      given(dataset)
        .when(setMeta('ds', { provenance: 'toolong' }))
        .thenThrows(InvalidValueForKey, /at most 2 characters/));
    it('null where it is not allowed', () =>
      given(dataset)
        .when(setMeta('ds', { hidden: null }))
        .thenThrows(InvalidValueForKey, /not allowed to be null/));
    it('a lifetime that is not a number', () =>
      given(dataset)
        .when(setMeta('ds', { lifetime: 'soon' }))
        .thenThrows(InvalidValueForKey, /lifetime is not a number/));
    it('a file-only key on a collection', () =>
      given(dataset)
        .when(setMeta('ds', { events: 3 }))
        .thenThrows(UnsupportedOperation, /events for user.jdoe:ds cannot be updated/));
    it('any key of a missing DID', () =>
      given([])
        .when(setMeta('ds', { colour: 'red' }))
        .thenThrows(DataIdentifierNotFound));
  });

  describe('when the events of a file change', () => {
    it('sets guid and events on the file', () =>
      given([created('f1', 'FILE')])
        .when(setMeta('f1', { guid: '8AFC4F3E-2E4D-4C4B-9F16-7D3D2A1B0C9E', events: 33 }))
        .then([metadataSet('f1', { guid: '8afc4f3e2e4d4c4b9f167d3d2a1b0c9e', events: 33 }, {})]));
    it('updates the dataset’s entry of the file and its totals (UpdateContentEntry)', () =>
      given([
        created('ds', 'DATASET'),
        {
          type: 'DidsAttached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'DATASET',
            children: [fileEntry('f1'), fileEntry('f2')],
            totals: { length: 2, bytes: 200, events: 20 },
            attachedAt: AT,
          },
        },
      ])
        .when({
          type: 'UpdateContentEntry',
          data: { scope: 'user.jdoe', name: 'ds', child: { scope: 'user.jdoe', name: 'f1' }, events: 33 },
          metadata: metadata(),
        })
        .then([
          {
            type: 'DidContentUpdated',
            data: {
              scope: 'user.jdoe',
              name: 'ds',
              child: fileEntry('f1', { events: 33 }),
              totals: { length: 2, bytes: 200, events: 43 },
              updatedAt: AT,
            },
          },
        ]));
  });

  describe('checks values against the metadata conventions of their keys', () => {
    const datatype: MetaConvention = {
      key: 'datatype',
      keyType: 'DATASET',
      valueType: 'str',
      valueRegexp: '^[A-Z]',
      values: ['AOD', 'ESD'],
    };
    const conventions = new Map([['datatype', datatype]]);
    const size = new Map<string, MetaConvention>([
      ['size', { key: 'size', keyType: 'ALL', valueType: 'int', valueRegexp: null, values: [] }],
    ]);
    it('accepts an allowed value', () =>
      given([created('ds', 'DATASET')])
        .when(setMeta('ds', { datatype: 'AOD' }, conventions))
        .then([metadataSet('ds', { datatype: 'AOD' }, {})]));
    it('refuses a value not allowed', () =>
      given([created('ds', 'DATASET')])
        .when(setMeta('ds', { datatype: 'RAW' }, conventions))
        .thenThrows(InvalidValueForKey, /not one of the allowed values/));
    it('refuses a value not matching the expression', () =>
      given([created('ds', 'DATASET')])
        .when(setMeta('ds', { datatype: 'aod' }, conventions))
        .thenThrows(InvalidValueForKey, /does not match the regular expression/));
    it('refuses a key that does not apply to the DID’s type', () =>
      given([created('f1', 'FILE')])
        .when(setMeta('f1', { datatype: 'AOD' }, conventions))
        .thenThrows(InvalidValueForKey, /does not apply to a FILE/));
    it('refuses a value of another type', () =>
      given([created('ds', 'DATASET')])
        .when(setMeta('ds', { size: '12' }, size))
        .thenThrows(InvalidValueForKey, /required type int/));
  });

  const deleteKey = (name: string, key: string) =>
    ({ type: 'DeleteDidMetadataKey', data: { scope: 'user.jdoe', name, key }, metadata: metadata() }) as const;

  describe('when a key is deleted', () => {
    const withJson = [created('ds', 'DATASET'), metadataSet('ds', {}, { colour: 'red' })];
    it('deletes a JSON key', () =>
      given(withJson)
        .when(deleteKey('ds', 'colour'))
        .then([
          { type: 'DidMetadataKeyDeleted', data: { scope: 'user.jdoe', name: 'ds', key: 'colour', deletedAt: AT } },
        ]));
    it('refuses a key the DID does not have', () =>
      given(withJson)
        .when(deleteKey('ds', 'shape'))
        .thenThrows(KeyNotFound, /^shape$/));
    it('refuses a column key', () =>
      given(withJson)
        .when(deleteKey('ds', 'project'))
        .thenThrows(NotImplementedError_, /does not currently support deleting metadata/));
    it('refuses a DID without JSON metadata', () =>
      given([created('ds', 'DATASET')])
        .when(deleteKey('ds', 'colour'))
        .thenThrows(DataIdentifierNotFound, /Key not found for data identifier 'user.jdoe:ds'/));
  });
});

describe('meta convention decider', () => {
  const conventions = deciderSpec(metaConventionDecider);
  const addKey = (keyType: unknown, valueType: unknown = null, valueRegexp: unknown = null) =>
    ({
      type: 'AddMetaConventionKey',
      data: { key: 'datatype', keyType, valueType, valueRegexp },
      metadata: metadata(),
    }) as const;
  const addValue = (value: unknown) =>
    ({ type: 'AddMetaConventionValue', data: { key: 'datatype', value }, metadata: metadata() }) as const;
  const keyAdded = {
    type: 'MetaConventionKeyAdded',
    data: { key: 'datatype', keyType: 'DATASET', valueType: 'str', valueRegexp: '^[A-Z]+$', addedAt: AT },
  } as const;

  describe('when a key is added', () => {
    it('takes the value type as the Python client sends it', () =>
      conventions([])
        .when(addKey('DATASET', "<class 'str'>", '^[A-Z]+$'))
        .then([keyAdded]));
    it('takes the key type by its letter', () =>
      conventions([])
        .when(addKey('D', 'str', '^[A-Z]+$'))
        .then([keyAdded]));
    it('adds a key only once', () =>
      conventions([keyAdded])
        .when(addKey('DATASET'))
        .thenThrows(Duplicate, /key 'datatype' already exists!/));
    it('refuses a value type it does not know', () =>
      conventions([])
        .when(addKey('DATASET', 'list'))
        .thenThrows(UnsupportedValueType, /The type 'list' is not supported for values!/));
    it('refuses a missing key type', () =>
      conventions([])
        .when(addKey(undefined))
        .thenThrows(UnsupportedKeyType, /The type 'None' is not supported for keys!/));
    it('refuses an expression that does not compile', () =>
      conventions([])
        .when(addKey('ALL', null, '('))
        .thenThrows(InvalidObject, /value_regexp/));
    it('refuses an expression with a backreference, which a linear-time engine cannot run', () =>
      conventions([])
        .when(addKey('ALL', null, '([A-Z])\\1'))
        .thenThrows(InvalidObject, /value_regexp.*backreference/));
    it('refuses an expression with a lookaround, which a linear-time engine cannot run', () =>
      conventions([])
        .when(addKey('ALL', null, '(?=A)[A-Z]+'))
        .thenThrows(InvalidObject, /value_regexp.*lookaround/));
  });

  describe('when a value is added', () => {
    it('adds a value matching the key', () =>
      conventions([keyAdded])
        .when(addValue('AOD'))
        .then([{ type: 'MetaConventionValueAdded', data: { key: 'datatype', value: 'AOD', addedAt: AT } }]));
    it('adds a value only once', () =>
      conventions([
        keyAdded,
        { type: 'MetaConventionValueAdded', data: { key: 'datatype', value: 'AOD', addedAt: AT } },
      ])
        .when(addValue('AOD'))
        .thenThrows(Duplicate, /key-value 'datatype-AOD' already exists!/));
    it('refuses a value not matching the key’s expression', () =>
      conventions([keyAdded])
        .when(addValue('aod'))
        .thenThrows(InvalidValueForKey, /regular expression/));
    it('refuses a value that is not a string', () =>
      conventions([keyAdded]).when(addValue(5)).thenThrows(InvalidValueForKey));
    it('refuses a value of a key that does not exist', () =>
      conventions([])
        .when(addValue('AOD'))
        .thenThrows(KeyNotFound, /key 'datatype' does not exist!/));
  });
});
