import {
  DataIdentifierNotFound,
  DuplicateContent,
  FileAlreadyExists,
  FileConsistencyMismatch,
  UnsupportedOperation,
} from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import {
  didKey,
  type CollectionType,
  type ContentEntry,
  type ContentTotals,
  type Did,
  type DidAvailability,
  type DidEvent,
  type DidRef,
  type DidType,
  type LiveDid,
} from './did.ts';

/**
 * Attaching and detaching (Rucio's `attach_dids_to_dids` / `detach_dids`): files go into
 * datasets, datasets or containers into containers, never in a cycle. One attach call is one
 * event on the parent's stream holding every child, so the parent's state never needs the
 * children's streams replayed.
 */

/** What the parent needs to know of a would-be child, read from the child's own stream. */
export type ChildFacts = Readonly<{
  didType: DidType;
  availability: DidAvailability;
  bytes: number | null;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  events: number | null;
  /** An archive file with constituents: a dataset it enters becomes `is_archive`. */
  isArchive?: boolean;
}>;

/** A child as the request names it; `bytes`, `adler32` and `md5` when given must match the catalogue. */
export type AttachRequest = Readonly<{
  scope: string;
  name: string;
  bytes?: unknown;
  adler32?: unknown;
  md5?: unknown;
}>;

/** A requested child and its facts (undefined: no such DID). */
export type AttachCandidate = Readonly<{ request: AttachRequest; facts: ChildFacts | undefined }>;

/** The content entry of a file child: its name and the file facts a collection's rows copy. */
export const fileEntryOf = (child: DidRef, facts: ChildFacts): ContentEntry => ({
  scope: child.scope,
  name: child.name,
  didType: 'FILE',
  bytes: facts.bytes,
  adler32: facts.adler32,
  md5: facts.md5,
  guid: facts.guid,
  events: facts.events,
});

export const childFactsOf = (state: Did): ChildFacts | undefined =>
  state.status === 'Live'
    ? {
        didType: state.record.didType,
        availability: state.record.availability,
        bytes: state.record.bytes,
        adler32: state.record.adler32,
        md5: state.record.md5,
        guid: state.record.guid,
        events: state.record.events,
        isArchive: state.record.columns.is_archive === true,
      }
    : undefined;

export type AttachDids = Command<
  'AttachDids',
  {
    scope: string;
    name: string;
    children: readonly AttachCandidate[];
    ignoreDuplicates: boolean;
    /** `scope:name` of every ancestor of the parent; only containers need it, to refuse cycles. */
    ancestors: ReadonlySet<string>;
  }
>;

/**
 * `ifAttached` (the undertaker, which learns the parents from a read model that may lag): a parent
 * that is gone, or children no longer attached, are skipped instead of refused.
 */
export type DetachDids = Command<
  'DetachDids',
  { scope: string; name: string; children: readonly DidRef[]; ifAttached?: boolean }
>;

const notFound = (scope: string, name: string) =>
  new DataIdentifierNotFound(`Data identifier '${scope}:${name}' not found`);

/** The requested children, each key once with its last description (Rucio builds a dict). */
const uniqueRequests = (children: readonly AttachCandidate[]): AttachCandidate[] => {
  const byKey = new Map<string, AttachCandidate>();
  for (const child of children) byKey.set(didKey(child.request.scope, child.request.name), child);
  return [...byKey.values()];
};

export const attachDids = ({ data, metadata }: AttachDids, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  const parent = state.record;
  if (parent.didType === 'FILE')
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' is a file`);
  if (!parent.isOpen) throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' is closed`);
  const entries = parent.didType === 'DATASET' ? filesToAttach(state, data) : collectionsToAttach(state, data);
  if (entries.length === 0) return [];
  const events: DidEvent[] = [
    {
      type: 'DidsAttached',
      data: {
        scope: data.scope,
        name: data.name,
        didType: parent.didType,
        children: entries,
        totals: totalsAfter(parent.didType, state, entries, 1),
        attachedAt: metadata.now.toISOString(),
      },
    },
  ];
  // A dataset that takes an archive file is marked, as Rucio marks it when the file is attached.
  const attached = new Set(entries.map((entry) => didKey(entry.scope, entry.name)));
  const archive = data.children.find(
    ({ request, facts }) => facts?.isArchive === true && attached.has(didKey(request.scope, request.name)),
  );
  if (parent.didType === 'DATASET' && archive && parent.columns.is_archive !== true)
    events.push({
      type: 'DatasetMarkedArchive',
      data: {
        scope: data.scope,
        name: data.name,
        archive: { scope: archive.request.scope, name: archive.request.name },
        markedAt: metadata.now.toISOString(),
      },
    });
  return events;
};

const filesToAttach = (state: LiveDid, data: AttachDids['data']): ContentEntry[] => {
  const entries: ContentEntry[] = [];
  const duplicates: string[] = [];
  for (const { request, facts } of uniqueRequests(data.children)) {
    const label = `${request.scope}:${request.name}`;
    if (!facts) throw notFound(request.scope, request.name);
    if (facts.availability === 'LOST') throw new UnsupportedOperation(`File ${label} is LOST and cannot be attached`);
    if (facts.didType !== 'FILE') {
      throw new UnsupportedOperation(`Data identifier ${label} of type ${facts.didType} cannot be added to a dataset`);
    }
    for (const key of ['bytes', 'adler32', 'md5'] as const) {
      if (!(key in request)) continue;
      const claimed = pythonStr(request[key]);
      const stored = pythonStr(facts[key]);
      if (claimed !== stored)
        throw new FileConsistencyMismatch(`${key} mismatch for '${label}': ${claimed}!=${stored}`);
    }
    if (state.content.children.has(didKey(request.scope, request.name))) {
      duplicates.push(label);
      continue;
    }
    entries.push(fileEntryOf(request, facts));
  }
  if (duplicates.length > 0 && !data.ignoreDuplicates) {
    throw new FileAlreadyExists(
      `The file(s) ${duplicates.join(', ')} are already attached to ${data.scope}:${data.name}`,
    );
  }
  return entries;
};

const collectionsToAttach = (state: LiveDid, data: AttachDids['data']): ContentEntry[] => {
  const parentKey = didKey(data.scope, data.name);
  const requests = uniqueRequests(data.children);
  if (requests.some(({ request }) => didKey(request.scope, request.name) === parentKey)) {
    throw new UnsupportedOperation('Self-append is not valid!');
  }
  const entries: ContentEntry[] = [];
  const duplicates: string[] = [];
  let childType: DidType | undefined;
  for (const { request, facts } of requests) {
    const label = `${request.scope}:${request.name}`;
    if (!facts) throw notFound(request.scope, request.name);
    if (facts.didType === 'FILE')
      throw new UnsupportedOperation(`Adding a file (${label}) to a container (${parentKey}) is forbidden`);
    childType ??= facts.didType;
    if (facts.didType !== childType) {
      throw new UnsupportedOperation(
        `Mixed collection is not allowed: '${label}' is a ${facts.didType}(expected type: ${childType})`,
      );
    }
    if (facts.didType === 'CONTAINER' && data.ancestors.has(didKey(request.scope, request.name))) {
      throw new UnsupportedOperation(`Circular attachment detected. ${label} is already a parent of ${parentKey}`);
    }
    if (state.content.children.has(didKey(request.scope, request.name))) {
      duplicates.push(label);
      continue;
    }
    entries.push({
      scope: request.scope,
      name: request.name,
      didType: facts.didType,
      bytes: null,
      adler32: null,
      md5: null,
      guid: null,
      events: null,
    });
  }
  if (duplicates.length > 0 && !data.ignoreDuplicates) {
    throw new DuplicateContent(`The data identifier(s) ${duplicates.join(', ')} are already attached to ${parentKey}`);
  }
  return entries;
};

export const detachDids = ({ data, metadata }: DetachDids, state: Did): DidEvent[] => {
  if (data.ifAttached) {
    if (state.status !== 'Live') return [];
    const attached = data.children.filter((child) => state.content.children.has(didKey(child.scope, child.name)));
    if (attached.length === 0) return [];
    data = { ...data, children: attached, ifAttached: false };
  }
  if (state.status !== 'Live' || state.record.didType === 'FILE') throw notFound(data.scope, data.name);
  if (state.content.children.size === 0) {
    throw new DataIdentifierNotFound(`Data identifier '${data.scope}:${data.name}' has no child data identifiers.`);
  }
  const remaining = new Set(state.content.children.keys());
  const detached: ContentEntry[] = [];
  for (const child of data.children) {
    if (child.scope === data.scope && child.name === data.name)
      throw new UnsupportedOperation('Self-detach is not valid.');
    const key = didKey(child.scope, child.name);
    if (!remaining.delete(key)) {
      throw new DataIdentifierNotFound(`Data identifier '${key}' not found under '${data.scope}:${data.name}'`);
    }
    detached.push(state.content.children.get(key)!);
  }
  if (detached.length === 0) return [];
  return [
    {
      type: 'DidsDetached',
      data: {
        scope: data.scope,
        name: data.name,
        didType: state.record.didType,
        children: detached,
        totals: totalsAfter(state.record.didType, state, detached, -1),
        detachedAt: metadata.now.toISOString(),
      },
    },
  ];
};

/**
 * A collection's totals follow its content, as the judge-evaluator makes them in Rucio on Oracle:
 * a dataset counts and sums its files; a container counts its direct children and has no bytes
 * until it is closed (closing sums the files of all its datasets).
 */
const totalsAfter = (
  didType: CollectionType,
  state: LiveDid,
  changed: readonly ContentEntry[],
  sign: 1 | -1,
): ContentTotals => {
  const length = state.content.children.size + sign * changed.length;
  if (didType === 'CONTAINER') return { length, bytes: null, events: state.content.totals.events };
  let bytes = state.content.totals.bytes ?? 0;
  let events = state.content.totals.events ?? 0;
  for (const entry of changed) {
    bytes += sign * (entry.bytes ?? 0);
    events += sign * (entry.events ?? 0);
  }
  return { length, bytes, events };
};

/** Adjusts a dataset's event total when one file's copy changes. */
export const totalsWithReplacedEntry = (state: LiveDid, previous: ContentEntry, next: ContentEntry): ContentTotals => {
  const totals = state.content.totals;
  if (state.record.didType !== 'DATASET') return totals;
  return { ...totals, events: (totals.events ?? 0) - (previous.events ?? 0) + (next.events ?? 0) };
};

/** Python's `str()` of a JSON value, which is what Rucio compares consistency values with. */
const pythonStr = (value: unknown): string => {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  return String(value);
};
