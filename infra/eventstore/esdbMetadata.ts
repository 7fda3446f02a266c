import { isRecord } from '../typeGuards.ts';
import type { EventMetadata } from './eventStore.ts';

/**
 * Event metadata in KurrentDB's atomic multi-stream append (`multiStreamAppend`, KurrentDB 25.1
 * and later) must be a flat object of string values: the server keeps it as record properties,
 * and the client refuses anything else ("multiStreamAppend requires metadata to be a plain object
 * with string keys and string values"). Ours is not flat: `schemaVersion` is a number, `step` an
 * object, and later fields may be anything JSON holds. So an event appended that way carries:
 *
 *   { account: "root", requestId: "…", at: "…", hash: "…",   (strings as they are)
 *     schemaVersion: "1",                                     (any other value as its JSON)
 *     "dms.json": "[\"schemaVersion\"]" }                     (which keys hold JSON)
 *
 * Reading it back (the classic read API, on either path) the server synthesises the metadata
 * JSON from the properties and adds its own `$schema.name` and `$schema.format`; `decodeMetadata`
 * drops every `$` key (the protocol reserves them for the server, so ours never use one), parses
 * the keys `dms.json` names, and hands back an object deep-equal to the one appended. Metadata
 * without `dms.json` (every event written by the classic append) is returned as it is.
 *
 * Hashes are computed over the metadata as given, before encoding, and checked over the decoded
 * metadata, whose canonical JSON is the same (eventHashes.ts): an event hashes the same whichever
 * path wrote it.
 */

/** The key listing which properties hold JSON text rather than a string value. */
export const JSON_KEYS_PROPERTY = 'dms.json';

/** An event's metadata as the atomic multi-stream append takes it: string values only. */
export type FlatMetadata = Readonly<Record<string, string>>;

/** A metadata field this encoding cannot carry without being mistaken for something else. */
export class MetadataNotEncodableError extends Error {
  constructor(readonly key: string) {
    super(
      key === JSON_KEYS_PROPERTY
        ? `Event metadata may not use the key ${JSON_KEYS_PROPERTY}: it marks the encoded fields`
        : `Event metadata key ${JSON.stringify(key)}: keys starting with $ belong to the server`,
    );
    this.name = 'MetadataNotEncodableError';
  }
}

export const encodeMetadata = (metadata: EventMetadata): FlatMetadata => {
  const flat: Record<string, string> = {};
  const jsonKeys: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (key === JSON_KEYS_PROPERTY || key.startsWith('$')) throw new MetadataNotEncodableError(key);
    // Left out, as JSON.stringify and the hashes' canonical JSON leave it out.
    if (value === undefined) continue;
    if (typeof value === 'string') {
      flat[key] = value;
    } else {
      flat[key] = JSON.stringify(value);
      jsonKeys.push(key);
    }
  }
  flat[JSON_KEYS_PROPERTY] = JSON.stringify(jsonKeys);
  return flat;
};

/**
 * The metadata an event was appended with, from what a read gives back: decoded when it was
 * appended flat, otherwise as stored. Throws on a `dms.json` that is not a list of keys holding
 * JSON text, which no writer of this service produces.
 */
export const decodeMetadata = (stored: unknown): unknown => {
  if (!isRecord(stored)) return stored;
  const marker = stored[JSON_KEYS_PROPERTY];
  if (marker === undefined) return stored;
  const jsonKeys = typeof marker === 'string' ? parseKeyList(marker) : undefined;
  if (!jsonKeys) throw new Error(`Event metadata ${JSON_KEYS_PROPERTY} is not a list of keys: ${String(marker)}`);
  const decoded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    if (key === JSON_KEYS_PROPERTY || key.startsWith('$')) continue;
    if (!jsonKeys.has(key)) {
      decoded[key] = value;
      continue;
    }
    if (typeof value !== 'string') throw new Error(`Event metadata ${key}: expected JSON text, found ${typeof value}`);
    decoded[key] = JSON.parse(value);
  }
  return decoded;
};

const parseKeyList = (text: string): ReadonlySet<string> | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.every((key) => typeof key === 'string') ? new Set(parsed) : undefined;
};
