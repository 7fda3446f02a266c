import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';

/**
 * Checksums computed over a stream of chunks, as Rucio stores them: adler32 as 8 lowercase hex
 * digits (zlib's Adler-32 starting at 1, `rucio.common.checksum.adler32`), md5 as 32.
 */

/** The largest prime below 2^16, Adler-32's modulus. */
const BASE = 65521;
/** zlib's NMAX: the most bytes summed before `b` could pass 2^32, so the modulo runs once per block instead of once per byte. */
const NMAX = 5552;

export class Adler32 {
  private a = 1;
  private b = 0;

  update(chunk: Uint8Array): this {
    let a = this.a;
    let b = this.b;
    const length = chunk.length;
    let index = 0;
    while (index < length) {
      const end = Math.min(index + NMAX, length);
      // Sixteen bytes per turn: V8 keeps a and b in registers, which roughly doubles the rate of a plain loop.
      const end16 = end - ((end - index) & 15);
      while (index < end16) {
        a += chunk[index]!; b += a; a += chunk[index + 1]!; b += a; a += chunk[index + 2]!; b += a; a += chunk[index + 3]!; b += a;
        a += chunk[index + 4]!; b += a; a += chunk[index + 5]!; b += a; a += chunk[index + 6]!; b += a; a += chunk[index + 7]!; b += a;
        a += chunk[index + 8]!; b += a; a += chunk[index + 9]!; b += a; a += chunk[index + 10]!; b += a; a += chunk[index + 11]!; b += a;
        a += chunk[index + 12]!; b += a; a += chunk[index + 13]!; b += a; a += chunk[index + 14]!; b += a; a += chunk[index + 15]!; b += a;
        index += 16;
      }
      while (index < end) {
        a += chunk[index]!;
        b += a;
        index += 1;
      }
      a %= BASE;
      b %= BASE;
    }
    this.a = a;
    this.b = b;
    return this;
  }

  /** 8 lowercase hex digits, zero-padded as Rucio pads them. */
  digest(): string {
    return (((this.b << 16) | this.a) >>> 0).toString(16).padStart(8, '0');
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
export const checksumFile = async (path: string, name: ChecksumName | null, chunkBytes = 1024 * 1024, signal?: AbortSignal): Promise<Checksums> => {
  const checksum = new StreamChecksum(name);
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await file.read(buffer, 0, chunkBytes, null);
      if (bytesRead === 0) break;
      checksum.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
  return checksum.result();
};
