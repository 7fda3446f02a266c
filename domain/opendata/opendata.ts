import { didKey } from '../did/did.ts';
import { eventTypes, type Event } from '../shared/event.ts';

/**
 * The open data catalogue (Rucio 39's `dids_opendata` with its meta, DOI and record tables): an
 * existing DID registered for publication, its state (DRAFT, then PUBLIC, maybe SUSPENDED), a
 * JSON document of metadata, a DOI and a record id. Each entry is an aggregate with its own stream
 * (`opendata-<scope>:<name>`); the uniqueness of DOIs and record ids across entries is decided on
 * streams of their own (opendataIdentifiers.ts).
 */

export const opendataStreamName = (scope: string, name: string): string => `opendata-${didKey(scope, name)}`;

export const OPENDATA_STATES = ['DRAFT', 'PUBLIC', 'SUSPENDED'] as const;
export type OpenDataState = (typeof OPENDATA_STATES)[number];

type EntryRef = { scope: string; name: string };

/** A DID entered the catalogue, as a DRAFT. */
export type OpenDataDidAdded = Event<'OpenDataDidAdded', EntryRef & { state: 'DRAFT'; at: string }>;
export type OpenDataDidStateChanged = Event<
  'OpenDataDidStateChanged',
  EntryRef & { previous: OpenDataState; state: OpenDataState; at: string }
>;
/** The whole metadata document, replacing the one before (Rucio keeps one JSON value per entry). */
export type OpenDataDidMetaSet = Event<'OpenDataDidMetaSet', EntryRef & { meta: Record<string, unknown>; at: string }>;
export type OpenDataDidDoiSet = Event<
  'OpenDataDidDoiSet',
  EntryRef & { doi: string; previous: string | null; at: string }
>;
export type OpenDataDidRecordIdSet = Event<
  'OpenDataDidRecordIdSet',
  EntryRef & { recordId: number; previous: number | null; at: string }
>;
/** A DRAFT entry left the catalogue with its metadata, DOI and record id (the DID stays). */
export type OpenDataDidDeleted = Event<
  'OpenDataDidDeleted',
  EntryRef & { doi: string | null; recordId: number | null; at: string }
>;

export type OpenDataEvent =
  | OpenDataDidAdded
  | OpenDataDidStateChanged
  | OpenDataDidMetaSet
  | OpenDataDidDoiSet
  | OpenDataDidRecordIdSet
  | OpenDataDidDeleted;

export const OPENDATA_EVENT_TYPES = eventTypes<OpenDataEvent>({
  OpenDataDidAdded: true,
  OpenDataDidStateChanged: true,
  OpenDataDidMetaSet: true,
  OpenDataDidDoiSet: true,
  OpenDataDidRecordIdSet: true,
  OpenDataDidDeleted: true,
});

export type ListedOpenDataDid = Readonly<{
  status: 'Listed';
  scope: string;
  name: string;
  state: OpenDataState;
  meta: Readonly<Record<string, unknown>> | null;
  doi: string | null;
  recordId: number | null;
  createdAt: string;
  updatedAt: string;
}>;

/** Absent: never registered, or deleted (a deleted entry may be registered again, as in Rucio). */
export type OpenDataDid = Readonly<{ status: 'Absent' }> | ListedOpenDataDid;

export const initialOpenDataDid = (): OpenDataDid => ({ status: 'Absent' });

export const evolveOpenDataDid = (state: OpenDataDid, event: OpenDataEvent): OpenDataDid => {
  if (event.type === 'OpenDataDidAdded') {
    const { scope, name, at } = event.data;
    return {
      status: 'Listed',
      scope,
      name,
      state: 'DRAFT',
      meta: null,
      doi: null,
      recordId: null,
      createdAt: at,
      updatedAt: at,
    };
  }
  if (state.status !== 'Listed') return state;
  switch (event.type) {
    case 'OpenDataDidStateChanged':
      return { ...state, state: event.data.state, updatedAt: event.data.at };
    case 'OpenDataDidMetaSet':
      return { ...state, meta: event.data.meta, updatedAt: event.data.at };
    case 'OpenDataDidDoiSet':
      return { ...state, doi: event.data.doi, updatedAt: event.data.at };
    case 'OpenDataDidRecordIdSet':
      return { ...state, recordId: event.data.recordId, updatedAt: event.data.at };
    case 'OpenDataDidDeleted':
      return { status: 'Absent' };
    default:
      return state;
  }
};

/**
 * A state as the API names it (`draft`, `public`, `suspended`, any case), or undefined. Rucio
 * stores the letters D, P, S and answers the names in capitals.
 */
export const openDataStateNamed = (text: string): OpenDataState | undefined =>
  OPENDATA_STATES.find((state) => state === text.toUpperCase());

/** DOIs as Rucio checks them: the `10.` prefix, a registrant code of 4 to 9 digits, a suffix. */
export const DOI_PATTERN = /^10\.\d{4,9}\/[-._;()/:A-Za-z0-9]+$/;
/** Rucio's `dids_opendata_doi.doi` column: String(255). */
export const DOI_MAX_LENGTH = 255;
