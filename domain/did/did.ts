import type { ReplicaAdded, ReplicaDeleted } from '../replica/replica.ts';
import { eventTypes, type Event } from '../shared/event.ts';
import { isKeyOf } from '../shared/narrowing.ts';

/**
 * A data identifier (DID): a file, a dataset (a collection of files) or a container (a collection
 * of datasets and containers), addressed by scope and name. Each DID is one aggregate with its own
 * stream. A collection's stream holds its attachments as batches (one event per attach call), so
 * a dataset of 100 000 files is a few hundred events, not 100 000.
 */

export const DID_TYPES = ['FILE', 'DATASET', 'CONTAINER'] as const;
export type DidType = (typeof DID_TYPES)[number];
export type CollectionType = Exclude<DidType, 'FILE'>;
export type DidAvailability = 'AVAILABLE' | 'LOST' | 'DELETED';

export type DidRef = Readonly<{ scope: string; name: string }>;

/** `scope:name`, Rucio's notation; neither part can contain the other's separator. */
export const didKey = (scope: string, name: string): string => `${scope}:${name}`;

/** The DID a key names (scopes hold no colon, names may). */
export const didFromKey = (key: string): DidRef => {
  const separator = key.indexOf(':');
  return { scope: key.slice(0, separator), name: key.slice(separator + 1) };
};

export const didStreamName = (scope: string, name: string): string => `did-${didKey(scope, name)}`;

/** What a collection keeps of each child: its type and the file facts its content rows copy. */
export type ContentEntry = Readonly<{
  scope: string;
  name: string;
  didType: DidType;
  bytes: number | null;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  events: number | null;
}>;

/** A collection's stored `length`, `bytes` and `events` (null until content first changes). */
export type ContentTotals = Readonly<{ length: number | null; bytes: number | null; events: number | null }>;

export const NO_TOTALS: ContentTotals = { length: null, bytes: null, events: null };

/** A scalar value of a DID_COLUMN metadata column (dates as ISO 8601 strings). */
export type ColumnValue = string | number | boolean | null;

export const isColumnValue = (value: unknown): value is ColumnValue =>
  value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

export type DidRecord = Readonly<{
  scope: string;
  name: string;
  didType: DidType;
  /** The owning account. */
  account: string;
  createdAt: string;
  monotonic: boolean;
  /** Collections only; null for files. */
  isOpen: boolean | null;
  closedAt: string | null;
  expiredAt: string | null;
  availability: DidAvailability;
  /** File facts; null for collections. */
  bytes: number | null;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  events: number | null;
  /** The other DID_COLUMN metadata set on the DID (project, datatype, is_new, ...). */
  columns: Readonly<Record<string, ColumnValue>>;
}>;

export type DidContent = Readonly<{
  /** Children by `scope:name`. Copied on change, never mutated: cached states stay valid. */
  children: ReadonlyMap<string, ContentEntry>;
  totals: ContentTotals;
}>;

export type LiveDid = Readonly<{
  status: 'Live';
  record: DidRecord;
  content: DidContent;
  /** Accounts following the DID. */
  followers: ReadonlySet<string>;
  /** The JSON metadata plugin's document; null when no JSON key was ever set. */
  jsonMeta: Readonly<Record<string, unknown>> | null;
  /** The replication rules on this DID, by rule id (what makes a rule a duplicate, and protects the DID). */
  rules: ReadonlyMap<string, DidRule>;
  /**
   * An archive file's constituents (the files inside it: Rucio's `archive_contents`), by
   * `scope:name`; absent until files are added to it. Copied on change, never mutated.
   */
  constituents?: ReadonlyMap<string, ContentEntry>;
}>;

/** What a DID keeps of a rule on it: what a duplicate is recognised by, and whether it is locked. */
export type DidRule = Readonly<{ account: string; rseExpression: string; copies: number; locked: boolean }>;

/** A deleted collection keeps its record: resurrection brings it back without content. */
export type Did = Readonly<{ status: 'Absent' }> | LiveDid | Readonly<{ status: 'Erased'; record: DidRecord }>;

/** The record fields a resurrected collection gets back. */
export type DidRestoration = Readonly<{
  didType: DidType;
  account: string;
  createdAt: string;
  monotonic: boolean;
  isOpen: boolean | null;
  closedAt: string | null;
  columns: Readonly<Record<string, ColumnValue>>;
}>;

export type DidCreated = Event<
  'DidCreated',
  {
    scope: string;
    name: string;
    didType: DidType;
    account: string;
    createdAt: string;
    expiredAt: string | null;
    monotonic: boolean;
    /** True for new collections (the transmogrifier's to-do flag), null for files. */
    isNew: boolean | null;
    bytes: number | null;
    adler32: string | null;
    md5: string | null;
    guid: string | null;
    events: number | null;
    /**
     * The replicas a file was registered with in the same step, each as its `ReplicaAdded` would
     * say (one event per file and registration call: docs/architecture.md, "Event granularity");
     * none for collections and files created alone.
     */
    replicas: readonly ReplicaAdded['data'][];
  }
>;
/** `columns` are DID_COLUMN keys with their new values (`lifetime` arrives as `expired_at`). */
export type DidMetadataSet = Event<
  'DidMetadataSet',
  {
    scope: string;
    name: string;
    columns: Readonly<Record<string, ColumnValue>>;
    json: Readonly<Record<string, unknown>>;
    setAt: string;
  }
>;
export type DidMetadataKeyDeleted = Event<
  'DidMetadataKeyDeleted',
  { scope: string; name: string; key: string; deletedAt: string }
>;
/** One attach call: every child and the collection's totals afterwards. */
export type DidsAttached = Event<
  'DidsAttached',
  {
    scope: string;
    name: string;
    didType: CollectionType;
    children: readonly ContentEntry[];
    totals: ContentTotals;
    attachedAt: string;
  }
>;
export type DidsDetached = Event<
  'DidsDetached',
  {
    scope: string;
    name: string;
    didType: CollectionType;
    children: readonly ContentEntry[];
    totals: ContentTotals;
    detachedAt: string;
  }
>;
/** A child file's guid or events changed; the collection's copy and totals follow. */
export type DidContentUpdated = Event<
  'DidContentUpdated',
  { scope: string; name: string; child: ContentEntry; totals: ContentTotals; updatedAt: string }
>;
export type DidClosed = Event<'DidClosed', { scope: string; name: string; totals: ContentTotals; closedAt: string }>;
export type DidReopened = Event<'DidReopened', { scope: string; name: string; reopenedAt: string }>;
export type DidFollowed = Event<
  'DidFollowed',
  { scope: string; name: string; didType: DidType; account: string; followedAt: string }
>;
export type DidUnfollowed = Event<'DidUnfollowed', { scope: string; name: string; account: string }>;
/**
 * A DID was deleted: an expired collection (the undertaker), with its content, metadata and
 * followers; a file whose last replica the reaper deleted; a collection the reaper's cleanup left
 * empty. `reason` says why (absent on events written before the reaper existed: the undertaker's).
 */
export type DidErased = Event<
  'DidErased',
  {
    scope: string;
    name: string;
    didType: DidType;
    children: readonly DidRef[];
    erasedAt: string;
    reason?: string;
    /**
     * The replicas whose deletion (by the reaper) erased the file, in the same step, each as its
     * `ReplicaDeleted` would say: one event per file and step (docs/architecture.md, "Event
     * granularity"). Absent when none (and in events written before).
     */
    replicasDeleted?: readonly ReplicaDeleted['data'][];
  }
>;
/** The undertaker processed an expired file: the file stays, without expiry and JSON metadata. */
export type FileExpiryCleared = Event<'FileExpiryCleared', { scope: string; name: string; clearedAt: string }>;
/** An erased collection came back (`restored`), or an expired DID lost its expiry (`restored` null). */
export type DidResurrected = Event<
  'DidResurrected',
  { scope: string; name: string; restored: DidRestoration | null; resurrectedAt: string }
>;
/** Set by replica handling when a file's last good copy is lost, or found again. */
export type FileAvailabilityChanged = Event<
  'FileAvailabilityChanged',
  { scope: string; name: string; availability: DidAvailability; changedAt: string }
>;

/**
 * Reads of a dataset (kronos: traces of its files' downloads, or a `touch` of it) since the last
 * batch of traces: `accessedAt` the latest, `accesses` how many batches saw it (Rucio counts one
 * per batch for a dataset).
 */
export type DidAccessed = Event<'DidAccessed', { scope: string; name: string; accesses: number; accessedAt: string }>;
/**
 * Files were put into an archive file (a `.zip`, `.tar.gz`, ...: `isArchiveName`), with the facts
 * of each as the archive's content rows keep them; the archive is then `is_archive`.
 */
export type ArchiveContentAdded = Event<
  'ArchiveContentAdded',
  { scope: string; name: string; constituents: readonly ContentEntry[]; addedAt: string }
>;
/** A file became a constituent of an archive (its `constituent` column). */
export type FileMarkedConstituent = Event<
  'FileMarkedConstituent',
  { scope: string; name: string; archive: DidRef; markedAt: string }
>;
/** A dataset holds an archive file (its `is_archive` column). */
export type DatasetMarkedArchive = Event<
  'DatasetMarkedArchive',
  { scope: string; name: string; archive: DidRef; markedAt: string }
>;

/** A replication rule was added on the DID. */
export type DidRuleAttached = Event<'DidRuleAttached', { scope: string; name: string; ruleId: string; rule: DidRule }>;
/** A rule on the DID changed what the DID keeps of it (its owner, its lock). */
export type DidRuleChanged = Event<'DidRuleChanged', { scope: string; name: string; ruleId: string; rule: DidRule }>;
/** A rule on the DID was deleted. */
export type DidRuleDetached = Event<'DidRuleDetached', { scope: string; name: string; ruleId: string }>;

export type DidEvent =
  | DidCreated
  | DidRuleAttached
  | DidRuleChanged
  | DidRuleDetached
  | DidMetadataSet
  | DidMetadataKeyDeleted
  | DidsAttached
  | DidsDetached
  | DidContentUpdated
  | DidClosed
  | DidReopened
  | DidFollowed
  | DidUnfollowed
  | DidErased
  | FileExpiryCleared
  | DidResurrected
  | FileAvailabilityChanged
  | DidAccessed
  | ArchiveContentAdded
  | FileMarkedConstituent
  | DatasetMarkedArchive;

export const DID_EVENT_TYPES = eventTypes<DidEvent>({
  DidCreated: true,
  DidRuleAttached: true,
  DidRuleChanged: true,
  DidRuleDetached: true,
  DidMetadataSet: true,
  DidMetadataKeyDeleted: true,
  DidsAttached: true,
  DidsDetached: true,
  DidContentUpdated: true,
  DidClosed: true,
  DidReopened: true,
  DidFollowed: true,
  DidUnfollowed: true,
  DidErased: true,
  FileExpiryCleared: true,
  DidResurrected: true,
  FileAvailabilityChanged: true,
  DidAccessed: true,
  ArchiveContentAdded: true,
  FileMarkedConstituent: true,
  DatasetMarkedArchive: true,
});

export const initialDid = (): Did => ({ status: 'Absent' });

const EMPTY_CONTENT: DidContent = { children: new Map(), totals: NO_TOTALS };

/** Rebuilds a DID from its events; unknown events (a file's replicas, say) leave it unchanged. */
export const evolveDid = (state: Did, event: DidEvent): Did => {
  switch (event.type) {
    case 'DidCreated':
      return createdDid(event.data);
    case 'DidResurrected':
      return resurrectedDid(state, event.data);
    default:
      break;
  }
  if (state.status !== 'Live') return state;
  switch (event.type) {
    case 'DidMetadataSet':
      return withMetadata(state, event.data);
    case 'DidMetadataKeyDeleted': {
      const { [event.data.key]: _deleted, ...jsonMeta } = state.jsonMeta ?? {};
      return { ...state, jsonMeta };
    }
    case 'DidsAttached': {
      const children = new Map(state.content.children);
      for (const child of event.data.children) children.set(didKey(child.scope, child.name), child);
      return { ...state, content: { children, totals: event.data.totals } };
    }
    case 'DidsDetached': {
      const children = new Map(state.content.children);
      for (const child of event.data.children) children.delete(didKey(child.scope, child.name));
      return { ...state, content: { children, totals: event.data.totals } };
    }
    case 'DidContentUpdated': {
      const children = new Map(state.content.children);
      children.set(didKey(event.data.child.scope, event.data.child.name), event.data.child);
      return { ...state, content: { children, totals: event.data.totals } };
    }
    case 'DidClosed':
      return {
        ...state,
        record: { ...state.record, isOpen: false, closedAt: event.data.closedAt },
        content: { ...state.content, totals: event.data.totals },
      };
    case 'DidReopened':
      return { ...state, record: { ...state.record, isOpen: true } };
    case 'DidFollowed':
      return { ...state, followers: new Set([...state.followers, event.data.account]) };
    case 'DidUnfollowed': {
      const followers = new Set(state.followers);
      followers.delete(event.data.account);
      return { ...state, followers };
    }
    case 'DidErased':
      return { status: 'Erased', record: state.record };
    case 'FileExpiryCleared':
      return { ...state, record: { ...state.record, expiredAt: null }, jsonMeta: null };
    case 'FileAvailabilityChanged':
      return { ...state, record: { ...state.record, availability: event.data.availability } };
    case 'DidRuleAttached':
    case 'DidRuleChanged':
      return { ...state, rules: new Map(state.rules).set(event.data.ruleId, event.data.rule) };
    case 'DidRuleDetached': {
      const rules = new Map(state.rules);
      rules.delete(event.data.ruleId);
      return { ...state, rules };
    }
    case 'ArchiveContentAdded': {
      const constituents = new Map(state.constituents);
      for (const entry of event.data.constituents) constituents.set(didKey(entry.scope, entry.name), entry);
      return { ...withColumn(state, 'is_archive', true), constituents };
    }
    case 'FileMarkedConstituent':
      return withColumn(state, 'constituent', true);
    case 'DatasetMarkedArchive':
      return withColumn(state, 'is_archive', true);
    default:
      return state;
  }
};

const createdDid = (data: DidCreated['data']): LiveDid => ({
  status: 'Live',
  record: {
    scope: data.scope,
    name: data.name,
    didType: data.didType,
    account: data.account,
    createdAt: data.createdAt,
    monotonic: data.monotonic,
    isOpen: data.didType === 'FILE' ? null : true,
    closedAt: null,
    expiredAt: data.expiredAt,
    availability: 'AVAILABLE',
    bytes: data.bytes,
    adler32: data.adler32,
    md5: data.md5,
    guid: data.guid,
    events: data.events,
    columns: data.isNew === null ? {} : { is_new: data.isNew },
  },
  content: EMPTY_CONTENT,
  followers: new Set(),
  jsonMeta: null,
  rules: new Map(),
});

const resurrectedDid = (state: Did, data: DidResurrected['data']): Did => {
  if (state.status === 'Erased' && data.restored) {
    const restored = data.restored;
    return {
      status: 'Live',
      record: { ...state.record, ...restored, expiredAt: null, availability: 'AVAILABLE' },
      content: EMPTY_CONTENT,
      followers: new Set(),
      jsonMeta: null,
      rules: new Map(),
    };
  }
  if (state.status !== 'Live') return state;
  return { ...state, record: { ...state.record, expiredAt: null } };
};

const withColumn = (state: LiveDid, column: string, value: ColumnValue): LiveDid => ({
  ...state,
  record: { ...state.record, columns: { ...state.record.columns, [column]: value } },
});

/** Columns with a place of their own in the record; the rest stay in `columns`. */
const RECORD_COLUMNS = { expired_at: 'expiredAt', guid: 'guid', events: 'events' } as const;

const withMetadata = (state: LiveDid, data: DidMetadataSet['data']): LiveDid => {
  let record = state.record;
  const columns: Record<string, ColumnValue> = { ...record.columns };
  for (const [key, value] of Object.entries(data.columns)) {
    if (isKeyOf(RECORD_COLUMNS, key)) record = { ...record, [RECORD_COLUMNS[key]]: value };
    else columns[key] = value;
  }
  const jsonMeta =
    Object.keys(data.json).length > 0 || state.jsonMeta ? { ...(state.jsonMeta ?? {}), ...data.json } : null;
  return { ...state, record: { ...record, columns }, jsonMeta };
};
