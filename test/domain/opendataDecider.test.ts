import { expect } from 'chai';
import type { OpenDataEvent } from '../../domain/opendata/opendata.ts';
import {
  OpenDataChangedMeanwhile,
  opendataDecider,
  type UpdateOpenDataDid,
} from '../../domain/opendata/opendataDecider.ts';
import { opendataIdentifierDecider, type OpenDataIdentifierEvent } from '../../domain/opendata/opendataIdentifiers.ts';
import { InputValidationError } from '../../domain/shared/errors.ts';
import {
  OpenDataDataIdentifierAlreadyExists,
  OpenDataDataIdentifierNotFound,
  OpenDataDuplicateDOI,
  OpenDataDuplicateRecordID,
  OpenDataInvalidState,
  OpenDataInvalidStateUpdate,
} from '../../domain/opendata/opendataErrors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(opendataDecider);
const ref = { scope: 'data18', name: 'run2' };
const added: OpenDataEvent = { type: 'OpenDataDidAdded', data: { ...ref, state: 'DRAFT', at: AT } };
const moved = (previous: 'DRAFT' | 'PUBLIC' | 'SUSPENDED', state: 'DRAFT' | 'PUBLIC' | 'SUSPENDED'): OpenDataEvent => ({
  type: 'OpenDataDidStateChanged',
  data: { ...ref, previous, state, at: AT },
});
const doiSet = (doi: string, previous: string | null = null): OpenDataEvent => ({
  type: 'OpenDataDidDoiSet',
  data: { ...ref, doi, previous, at: AT },
});
const update = (
  changes: Omit<UpdateOpenDataDid['data'], 'scope' | 'name' | 'didClosed' | 'read'>,
  extra: Partial<UpdateOpenDataDid['data']> = {},
): UpdateOpenDataDid => ({
  type: 'UpdateOpenDataDid',
  data: { ...ref, ...changes, didClosed: true, read: { doi: null, recordId: null }, ...extra },
  metadata: metadata(),
});

describe('Decider: open data entries', () => {
  describe('registering', () => {
    it('adds a DRAFT', () => given([]).when({ type: 'AddOpenDataDid', data: ref, metadata: metadata() }).then([added]));
    it('refuses an entry already in the catalogue', () =>
      given([added])
        .when({ type: 'AddOpenDataDid', data: ref, metadata: metadata() })
        .thenThrows(OpenDataDataIdentifierAlreadyExists));
    it('adds a DRAFT again after a deletion', () =>
      given([added, { type: 'OpenDataDidDeleted', data: { ...ref, doi: null, recordId: null, at: AT } }])
        .when({ type: 'AddOpenDataDid', data: ref, metadata: metadata() })
        .then([added]));
  });

  describe('moving between states', () => {
    it('makes a DRAFT of a closed DID PUBLIC', () =>
      given([added])
        .when(update({ state: 'PUBLIC' }))
        .then([moved('DRAFT', 'PUBLIC')]));
    it('refuses PUBLIC while the DID is open', () =>
      given([added])
        .when(update({ state: 'PUBLIC' }, { didClosed: false }))
        .thenThrows(OpenDataInvalidStateUpdate, /closed/));
    it('makes a SUSPENDED entry PUBLIC again', () =>
      given([added, moved('DRAFT', 'PUBLIC'), moved('PUBLIC', 'SUSPENDED')])
        .when(update({ state: 'PUBLIC' }))
        .then([moved('SUSPENDED', 'PUBLIC')]));
    it('refuses SUSPENDED from DRAFT', () =>
      given([added])
        .when(update({ state: 'SUSPENDED' }))
        .thenThrows(OpenDataInvalidStateUpdate));
    it('refuses DRAFT once the entry left it', () =>
      given([added, moved('DRAFT', 'PUBLIC')])
        .when(update({ state: 'DRAFT' }))
        .thenThrows(OpenDataInvalidStateUpdate));
    it('records nothing for the state the entry is in', () =>
      given([added])
        .when(update({ state: 'DRAFT' }))
        .thenNothingHappened());
    it('refuses an entry that is not in the catalogue', () =>
      given([])
        .when(update({ state: 'PUBLIC' }))
        .thenThrows(OpenDataDataIdentifierNotFound));
  });

  describe('metadata, DOI and record id', () => {
    it('records each that changes, in one decision', () =>
      given([added])
        .when(update({ meta: { title: 'x' }, doi: '10.1234/abc', recordId: 7 }))
        .then([
          { type: 'OpenDataDidMetaSet', data: { ...ref, meta: { title: 'x' }, at: AT } },
          doiSet('10.1234/abc'),
          { type: 'OpenDataDidRecordIdSet', data: { ...ref, recordId: 7, previous: null, at: AT } },
        ]));
    it('records a new DOI with the one it replaces', () =>
      given([added, doiSet('10.1234/abc')])
        .when(update({ doi: '10.1234/def' }, { read: { doi: '10.1234/abc', recordId: null } }))
        .then([doiSet('10.1234/def', '10.1234/abc')]));
    it('refuses a DOI without the 10. prefix and a registrant code', () =>
      given([added])
        .when(update({ doi: '10.12/abc' }))
        .thenThrows(InputValidationError, /not a DOI/));
    it('refuses a negative record id', () =>
      given([added])
        .when(update({ recordId: -1 }))
        .thenThrows(InputValidationError));
    it('refuses a state move and so records none of the rest', () =>
      given([added])
        .when(update({ state: 'SUSPENDED', doi: '10.1234/abc' }))
        .thenThrows(OpenDataInvalidStateUpdate));
    it('asks for a fresh read when the DOI changed since the caller read it', () => {
      const state = [added, doiSet('10.1234/abc')].reduce(opendataDecider.evolve, opendataDecider.initialState());
      expect(() => opendataDecider.decide(update({ doi: '10.1234/def' }), state)).to.throw(OpenDataChangedMeanwhile);
    });
  });

  describe('deleting', () => {
    it('deletes a DRAFT with its DOI and record id', () =>
      given([added, doiSet('10.1234/abc')])
        .when({
          type: 'DeleteOpenDataDid',
          data: { ...ref, read: { doi: '10.1234/abc', recordId: null } },
          metadata: metadata(),
        })
        .then([{ type: 'OpenDataDidDeleted', data: { ...ref, doi: '10.1234/abc', recordId: null, at: AT } }]));
    it('refuses an entry that left DRAFT', () =>
      given([added, moved('DRAFT', 'PUBLIC')])
        .when({
          type: 'DeleteOpenDataDid',
          data: { ...ref, read: { doi: null, recordId: null } },
          metadata: metadata(),
        })
        .thenThrows(OpenDataInvalidState));
  });
});

describe('Decider: open data identifiers (DOIs and record ids)', () => {
  const claims = deciderSpec(opendataIdentifierDecider);
  const claim = (name: string, kind: 'doi' | 'record_id' = 'doi', value: string | number = '10.1234/abc') => ({
    kind,
    value,
    scope: 'data18',
    name,
  });
  const claimed = (name: string): OpenDataIdentifierEvent => ({ type: 'OpenDataIdentifierClaimed', data: claim(name) });

  it('gives a free value to the entry asking', () =>
    claims([])
      .when({ type: 'ClaimOpenDataIdentifier', data: claim('a'), metadata: metadata() })
      .then([claimed('a')]));
  it('records nothing when the entry holds it already', () =>
    claims([claimed('a')])
      .when({ type: 'ClaimOpenDataIdentifier', data: claim('a'), metadata: metadata() })
      .thenNothingHappened());
  it('refuses a DOI another entry holds', () =>
    claims([claimed('a')])
      .when({ type: 'ClaimOpenDataIdentifier', data: claim('b'), metadata: metadata() })
      .thenThrows(OpenDataDuplicateDOI));
  it('refuses a record id another entry holds', () =>
    claims([{ type: 'OpenDataIdentifierClaimed', data: claim('a', 'record_id', 7) }])
      .when({ type: 'ClaimOpenDataIdentifier', data: claim('b', 'record_id', 7), metadata: metadata() })
      .thenThrows(OpenDataDuplicateRecordID));
  it('gives a released value to another entry', () =>
    claims([claimed('a'), { type: 'OpenDataIdentifierReleased', data: claim('a') }])
      .when({ type: 'ClaimOpenDataIdentifier', data: claim('b'), metadata: metadata() })
      .then([claimed('b')]));
  it('lets only the holder release a value', () =>
    claims([claimed('a')])
      .when({ type: 'ReleaseOpenDataIdentifier', data: claim('b'), metadata: metadata() })
      .thenNothingHappened());
});
