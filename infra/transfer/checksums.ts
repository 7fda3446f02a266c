import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Checksums computed over a stream of chunks, as Rucio stores them: adler32 as 8 lowercase hex
 * digits (zlib's Adler-32 starting at 1, `rucio.common.checksum.adler32`), md5 as 32.
 */

/** The largest prime below 2^16, Adler-32's modulus. */
const BASE = 65521;
/** zlib's NMAX: the most bytes summed one at a time before `b` could pass 2^32. */
const NMAX = 5552;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const EVEN_BYTES = 0x00ff00ff;

/**
 * Adler-32: `a` is 1 plus the sum of the bytes, `b` the sum of the successive values of `a`, both
 * modulo 65521. Byte by byte, each byte waits for the previous sum; here 64 bytes at a time are
 * read as 16 little-endian words whose bytes are summed in 16-bit lanes (bytes 0 and 2 of each
 * word in one number, 1 and 3 in another), which the processor does several at once, about twice
 * the rate of the byte loop. For a block of n = 4K bytes x_p (word k, byte j: p = 4k + j):
 *   a' = a + sum(x_p)
 *   b' = b + n a + sum((n - p) x_p) = b + n a + 4 sum_k prefix_k - (lane 1 + 2 lane 2 + 3 lane 3)
 * where prefix_k sums the bytes of words 0..k and lane j sums byte j of every word.
 */
export class Adler32 {
  private a = 1;
  private b = 0;

  update(chunk: Uint8Array): this {
    const length = chunk.length;
    // Bytes up to a word boundary one at a time (all of them on a big-endian machine).
    const head = LITTLE_ENDIAN ? Math.min(length, (4 - (chunk.byteOffset & 3)) & 3) : length;
    this.bytewise(chunk, 0, head);
    const wordCount = (length - head) >>> 2;
    if (wordCount >= 16) {
      const words = new Uint32Array(chunk.buffer, chunk.byteOffset + head, wordCount);
      let a = this.a;
      let b = this.b;
      const blocks = wordCount >>> 4;
      for (let block = 0, k = 0; block < blocks; block += 1) {
        // Lanes of 16 bits: a block of 16 words sums at most 16 * 255 per lane, and the prefix
        // sums at most 136 * 255; `| 0` keeps them 32-bit integers (read back unsigned).
        let evenLanes = 0;
        let oddLanes = 0;
        let evenPrefixes = 0;
        let oddPrefixes = 0;
        for (const end = k + 16; k < end; k += 1) {
          const word = words[k]!;
          evenLanes += word & EVEN_BYTES;
          oddLanes += (word >>> 8) & EVEN_BYTES;
          evenPrefixes = (evenPrefixes + evenLanes) | 0;
          oddPrefixes = (oddPrefixes + oddLanes) | 0;
        }
        const lane0 = evenLanes & 0xffff;
        const lane2 = evenLanes >>> 16;
        const lane1 = oddLanes & 0xffff;
        const lane3 = oddLanes >>> 16;
        const prefixes =
          (evenPrefixes & 0xffff) + (evenPrefixes >>> 16) + (oddPrefixes & 0xffff) + (oddPrefixes >>> 16);
        b = (b + 64 * a + 4 * prefixes - (lane1 + 2 * lane2 + 3 * lane3)) % BASE;
        a = (a + lane0 + lane1 + lane2 + lane3) % BASE;
      }
      this.a = a;
      this.b = b;
    }
    this.bytewise(chunk, head + (wordCount & ~15) * 4, length);
    return this;
  }

  /** 8 lowercase hex digits, zero-padded as Rucio pads them. */
  digest(): string {
    return (((this.b << 16) | this.a) >>> 0).toString(16).padStart(8, '0');
  }

  private bytewise(chunk: Uint8Array, start: number, end: number): void {
    let a = this.a;
    let b = this.b;
    for (let index = start; index < end;) {
      const stop = Math.min(end, index + NMAX);
      for (; index < stop; index += 1) {
        a += chunk[index]!;
        b += a;
      }
      a %= BASE;
      b %= BASE;
    }
    this.a = a;
    this.b = b;
  }
}

export type ChecksumName = 'adler32' | 'md5';

export type Checksums = Readonly<{ bytes: number; adler32: string | null; md5: string | null }>;

/** What the catalogue says a file holds: its size and whichever checksums it has. */
export type ExpectedFile = Readonly<{ bytes: number; adler32: string | null; md5: string | null }>;

/**
 * The checksum worth computing to verify a file: adler32 when the catalogue has one (Rucio's
 * preferred checksum, and cheaper than md5), md5 when that is all it has, none otherwise (size only).
 */
export const checksumToVerify = (expected: ExpectedFile): ChecksumName | null =>
  expected.adler32 !== null ? 'adler32' : expected.md5 !== null ? 'md5' : null;

/** Sums the chunks it is given; `result()` once the stream has ended. */
export class StreamChecksum {
  private readonly adler: Adler32 | null;
  private readonly md5: Hash | null;
  private bytes = 0;

  constructor(readonly name: ChecksumName | null) {
    this.adler = name === 'adler32' ? new Adler32() : null;
    this.md5 = name === 'md5' ? createHash('md5') : null;
  }

  update(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    this.adler?.update(chunk);
    this.md5?.update(chunk);
  }

  result(): Checksums {
    return { bytes: this.bytes, adler32: this.adler?.digest() ?? null, md5: this.md5?.digest('hex') ?? null };
  }
}

/**
 * Why a stream does not hold the expected file, or null when it does. The words name both values
 * (`adler32 mismatch: expected 0a1b2c3d, got 11223344`), as a finisher or an operator needs them.
 */
export const mismatchOf = (expected: ExpectedFile, actual: Checksums): string | null => {
  if (actual.bytes !== expected.bytes) return `size mismatch: expected ${expected.bytes} bytes, got ${actual.bytes}`;
  if (actual.adler32 !== null && expected.adler32 !== null && actual.adler32 !== expected.adler32.toLowerCase()) {
    return `adler32 mismatch: expected ${expected.adler32.toLowerCase()}, got ${actual.adler32}`;
  }
  if (actual.md5 !== null && expected.md5 !== null && actual.md5 !== expected.md5.toLowerCase()) {
    return `md5 mismatch: expected ${expected.md5.toLowerCase()}, got ${actual.md5}`;
  }
  return null;
};

/** Reads a file once, in chunks of `chunkBytes` (default 1 MiB), and sums it; never holds the whole file. */
export const checksumFile = async (
  /** A path, or a handle the caller opened (and closes). */
  source: string | FileHandle,
  name: ChecksumName | null,
  chunkBytes = 1024 * 1024,
  signal?: AbortSignal,
): Promise<Checksums> => {
  const checksum = new StreamChecksum(name);
  const file = typeof source === 'string' ? await open(source, 'r') : source;
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await file.read(buffer, 0, chunkBytes, null);
      if (bytesRead === 0) break;
      checksum.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    if (typeof source === 'string') await file.close();
  }
  return checksum.result();
};
