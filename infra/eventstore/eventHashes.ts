import { hash } from 'node:crypto';
import type { EventMetadata } from './eventStore.ts';
import { isRecord } from '../typeGuards.ts';

/**
 * Tamper evidence: every event carries `metadata.hash`, which chains it to the event before it in
 * its stream:
 *
 *   hash = sha256_hex(previous hash + "\n" + canonical JSON of { data, id, metadata, revision, stream, type })
 *
 * where `metadata` is the event's metadata without `hash`, `revision` is the decimal string of the
 * event's revision, and the previous hash of a stream's first event is the empty string. Canonical
 * JSON is JSON with every object's keys in code-unit order and no whitespace, so anybody can
 * recompute a hash from an export with a few lines of any language. The store's own recording
 * time is not covered (EventStoreDB sets it after the hash is computed); `metadata.at` is.
 *
 * The adapters compute the hashes at append time from the stream's last hash; `dms audit verify`
 * recomputes them (bin/commands/auditVerify.ts).
 */

/** The previous hash of a stream's first event (and of the first event written after unhashed ones). */
export const CHAIN_START = '';

/** What the hash of an event covers. */
export type HashedFields = Readonly<{
  id: string;
  streamName: string;
  revision: bigint;
  type: string;
  data: unknown;
  /** The metadata as stored; a `hash` in it is left out. */
  metadata: EventMetadata;
}>;

export const eventHash = (previousHash: string, event: HashedFields): string => {
  // The canonical JSON of { data, id, metadata, revision, stream, type }, keys already in order;
  // the metadata of one command is shared by its events, so its text is made once.
  const body =
    `{"data":${canonicalJson(event.data)},"id":${JSON.stringify(event.id)},"metadata":${canonicalMetadata(event.metadata)},` +
    `"revision":"${event.revision.toString()}","stream":${JSON.stringify(event.streamName)},"type":${JSON.stringify(event.type)}}`;
  // One call on one string: half the time of a Hash object fed three times, for events this small.
  return hash('sha256', `${previousHash}\n${body}`, 'hex');
};

/** Canonical texts of metadata objects without a hash (never mutated: they are readonly), by object. */
const metadataTexts = new WeakMap<EventMetadata, string>();

const canonicalMetadata = (metadata: EventMetadata): string => {
  if (metadata.hash !== undefined) return canonicalJson(withoutHash(metadata));
  let text = metadataTexts.get(metadata);
  if (text === undefined) metadataTexts.set(metadata, (text = canonicalJson(metadata)));
  return text;
};

/**
 * JSON with object keys sorted by code unit and no whitespace. Values are taken as
 * `JSON.stringify` takes them (`toJSON`, undefined members left out, undefined in arrays as
 * null), so a value and the same value read back from its JSON give the same text.
 *
 * Every event is hashed as it is appended, so this is on the write path of every command. The
 * usual case lets `JSON.stringify` write a copy of the value whose objects have their keys
 * inserted in sorted order (about three times faster than walking it here). Keys that object
 * literals cannot hold in insertion order (array-index-like keys, which engines list first in
 * numeric order, and `__proto__`) send the value to the walk of `canonicalJsonByWalk`, which says
 * the same thing slower (test/infra/canonicalJson.test.ts holds them equal).
 */
export const canonicalJson = (value: unknown): string => {
  const copy = sortedCopy(value);
  if (copy === NEEDS_WALK) return canonicalJsonByWalk(value);
  return JSON.stringify(copy) ?? 'null';
};

const NEEDS_WALK: unique symbol = Symbol('needs the walk');

/** Keys an object literal would not keep in the order they are set in. */
const unorderable = (key: string): boolean =>
  key === '__proto__' || (key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57);

/** The value with every object's keys in code-unit order (unchanged parts shared), or NEEDS_WALK. */
const sortedCopy = (value: unknown): unknown => {
  if (typeof value !== 'object' || value === null) return value;
  if ('toJSON' in value && typeof value.toJSON === 'function') return sortedCopy(value.toJSON());
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item = sortedCopy(value[index]);
      if (item === NEEDS_WALK) return NEEDS_WALK;
      if (item !== value[index]) (copy ??= value.slice())[index] = item;
    }
    return copy ?? value;
  }
  return isRecord(value) ? sortedRecord(value) : value;
};

const sortedRecord = (value: Readonly<Record<string, unknown>>): unknown => {
  const keys = Object.keys(value);
  for (const key of keys) if (unorderable(key)) return NEEDS_WALK;
  keys.sort();
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    const member = sortedCopy(value[key]);
    if (member === NEEDS_WALK) return NEEDS_WALK;
    copy[key] = member;
  }
  return copy;
};

/** The canonical JSON by walking the value: the definition `canonicalJson` keeps to. */
export const canonicalJsonByWalk = (value: unknown): string => {
  const text = canonical(value);
  return text === undefined ? 'null' : text;
};

const canonical = (value: unknown): string | undefined => {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // undefined, functions and symbols are left out; a bigint throws, as in JSON.stringify.
      return JSON.stringify(value);
  }
  if (value === null) return 'null';
  if ('toJSON' in value && typeof value.toJSON === 'function') return canonical(value.toJSON());
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1)
      text += `${index > 0 ? ',' : ''}${canonical(value[index]) ?? 'null'}`;
    return `${text}]`;
  }
  if (!isRecord(value)) return undefined;
  const keys = Object.keys(value).sort();
  let text = '{';
  for (const key of keys) {
    const member = canonical(value[key]);
    if (member === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${member}`;
  }
  return `${text}}`;
};

/** The metadata as given, without a `hash` a caller may have left in it (an import, a copy). */
export const withoutHash = (metadata: EventMetadata): EventMetadata => {
  if (metadata.hash === undefined) return metadata;
  const { hash: _hash, ...rest } = metadata;
  return rest;
};
