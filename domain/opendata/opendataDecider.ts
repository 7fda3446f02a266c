import { unknownCommand, type Decider } from '../shared/decider.ts';
import { InputValidationError } from '../shared/errors.ts';
import {
  OpenDataDataIdentifierAlreadyExists,
  OpenDataDataIdentifierNotFound,
  OpenDataInvalidState,
  OpenDataInvalidStateUpdate,
} from './opendataErrors.ts';
import type { Command } from '../shared/event.ts';
import {
  DOI_MAX_LENGTH,
  DOI_PATTERN,
  evolveOpenDataDid,
  initialOpenDataDid,
  type ListedOpenDataDid,
  type OpenDataDid,
  type OpenDataEvent,
  type OpenDataState,
} from './opendata.ts';

/**
 * Decisions on one open data entry (Rucio 39's core/opendata.py): registering a DID as a DRAFT,
 * updating its state, metadata, DOI and record id together (all or nothing), and deleting a
 * DRAFT. State moves: DRAFT stays DRAFT or becomes PUBLIC; PUBLIC needs a closed DID (a file
 * always is) and can be reached from any state; SUSPENDED only from PUBLIC; nothing goes back to
 * DRAFT. Facts about the DID come in the command, read before deciding.
 */

type EntryRef = { scope: string; name: string };

export type AddOpenDataDid = Command<'AddOpenDataDid', EntryRef>;

/**
 * The changes asked for (absent ones change nothing), whether the DID is closed now, and the DOI
 * and record id the caller read: it releases those in the same step, so a change made meanwhile
 * must make it read again (OpenDataChangedMeanwhile) rather than release the wrong ones.
 */
export type UpdateOpenDataDid = Command<
  'UpdateOpenDataDid',
  EntryRef & {
    state?: OpenDataState;
    meta?: Readonly<Record<string, unknown>>;
    doi?: string;
    recordId?: number;
    didClosed: boolean;
    read: Readonly<{ doi: string | null; recordId: number | null }>;
  }
>;

export type DeleteOpenDataDid = Command<
  'DeleteOpenDataDid',
  EntryRef & { read: Readonly<{ doi: string | null; recordId: number | null }> }
>;

export type OpenDataCommand = AddOpenDataDid | UpdateOpenDataDid | DeleteOpenDataDid;

/** The entry changed between the caller's read and the decision: read again and decide again. */
export class OpenDataChangedMeanwhile extends Error {
  constructor(scope: string, name: string) {
    super(`The open data entry ${scope}:${name} changed while it was being updated`);
    this.name = 'OpenDataChangedMeanwhile';
  }
}

export const openDataDidNotFound = (scope: string, name: string) =>
  new OpenDataDataIdentifierNotFound(`The DID ${scope}:${name} is not in the open data catalogue.`);

const listed = (state: OpenDataDid, { scope, name }: EntryRef): ListedOpenDataDid => {
  if (state.status !== 'Listed') throw openDataDidNotFound(scope, name);
  return state;
};

const checkRead = (state: ListedOpenDataDid, read: UpdateOpenDataDid['data']['read']): void => {
  if (state.doi !== read.doi || state.recordId !== read.recordId)
    throw new OpenDataChangedMeanwhile(state.scope, state.name);
};

export const addOpenDataDid = ({ data, metadata }: AddOpenDataDid, state: OpenDataDid): OpenDataEvent[] => {
  if (state.status === 'Listed')
    throw new OpenDataDataIdentifierAlreadyExists(
      `The DID ${data.scope}:${data.name} is in the open data catalogue already.`,
    );
  return [
    {
      type: 'OpenDataDidAdded',
      data: { scope: data.scope, name: data.name, state: 'DRAFT', at: metadata.now.toISOString() },
    },
  ];
};

/** Whether the entry may move from `from` to `to`; refused moves are OpenDataInvalidStateUpdate. */
const checkStateMove = (from: OpenDataState, to: OpenDataState, didClosed: boolean): void => {
  if (to === 'DRAFT' && from !== 'DRAFT')
    throw new OpenDataInvalidStateUpdate(`An entry that left DRAFT (it is ${from}) cannot become DRAFT again.`);
  if (to === 'PUBLIC' && !didClosed)
    throw new OpenDataInvalidStateUpdate('Only a closed DID can become PUBLIC: close it first.');
  if (to === 'SUSPENDED' && from === 'DRAFT')
    throw new OpenDataInvalidStateUpdate('A DRAFT cannot be SUSPENDED: make it PUBLIC first.');
};

export const checkDoi = (doi: string): string => {
  if (doi.length > DOI_MAX_LENGTH || !DOI_PATTERN.test(doi))
    throw new InputValidationError(
      `'${doi}' is not a DOI: it must read 10.<4 to 9 digits>/<letters, digits or -._;()/:>, at most ${DOI_MAX_LENGTH} characters.`,
    );
  return doi;
};

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Records only what differs from the entry; a state set to the one it has records nothing. */
export const updateOpenDataDid = ({ data, metadata }: UpdateOpenDataDid, state: OpenDataDid): OpenDataEvent[] => {
  const entry = listed(state, data);
  checkRead(entry, data.read);
  const at = metadata.now.toISOString();
  const ref = { scope: entry.scope, name: entry.name };
  const events: OpenDataEvent[] = [];
  if (data.state !== undefined) {
    checkStateMove(entry.state, data.state, data.didClosed);
    if (data.state !== entry.state)
      events.push({ type: 'OpenDataDidStateChanged', data: { ...ref, previous: entry.state, state: data.state, at } });
  }
  if (data.meta !== undefined && !sameJson(data.meta, entry.meta))
    events.push({ type: 'OpenDataDidMetaSet', data: { ...ref, meta: { ...data.meta }, at } });
  if (data.doi !== undefined && checkDoi(data.doi) !== entry.doi)
    events.push({ type: 'OpenDataDidDoiSet', data: { ...ref, doi: data.doi, previous: entry.doi, at } });
  if (data.recordId !== undefined) {
    if (!Number.isSafeInteger(data.recordId) || data.recordId < 0)
      throw new InputValidationError(`The record id must be a whole number from 0, not ${data.recordId}.`);
    if (data.recordId !== entry.recordId)
      events.push({
        type: 'OpenDataDidRecordIdSet',
        data: { ...ref, recordId: data.recordId, previous: entry.recordId, at },
      });
  }
  return events;
};

export const deleteOpenDataDid = ({ data, metadata }: DeleteOpenDataDid, state: OpenDataDid): OpenDataEvent[] => {
  const entry = listed(state, data);
  checkRead(entry, data.read);
  if (entry.state !== 'DRAFT')
    throw new OpenDataInvalidState(`Only a DRAFT entry can be deleted; ${data.scope}:${data.name} is ${entry.state}.`);
  return [
    {
      type: 'OpenDataDidDeleted',
      data: {
        scope: entry.scope,
        name: entry.name,
        doi: entry.doi,
        recordId: entry.recordId,
        at: metadata.now.toISOString(),
      },
    },
  ];
};

export const decideOpenDataDid = (command: OpenDataCommand, state: OpenDataDid): OpenDataEvent[] => {
  switch (command.type) {
    case 'AddOpenDataDid':
      return addOpenDataDid(command, state);
    case 'UpdateOpenDataDid':
      return updateOpenDataDid(command, state);
    case 'DeleteOpenDataDid':
      return deleteOpenDataDid(command, state);
    default:
      return unknownCommand('open data', command);
  }
};

export const opendataDecider: Decider<OpenDataDid, OpenDataCommand, OpenDataEvent> = {
  name: 'opendata',
  initialState: initialOpenDataDid,
  evolve: evolveOpenDataDid,
  decide: decideOpenDataDid,
};
