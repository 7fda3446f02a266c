import { expect } from 'chai';
import fc from 'fast-check';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { Adler32, checksumFile, checksumToVerify, mismatchOf } from '../../infra/transfer/checksums.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** zlib's own Adler-32: the last four bytes of a zlib stream. */
const zlibAdler32 = (data: Uint8Array): string => {
  const stream = deflateSync(data, { level: 0 });
  return stream
    .readUInt32BE(stream.length - 4)
    .toString(16)
    .padStart(8, '0');
};

describe('transfer checksums', () => {
  it('computes Adler-32 as zlib and Rucio do, padded to 8 hex digits', () => {
    expect(new Adler32().digest()).to.equal('00000001');
    expect(new Adler32().update(Buffer.from('Wikipedia')).digest()).to.equal('11e60398');
    const large = randomBytes(3 * 1024 * 1024 + 17);
    expect(new Adler32().update(large).digest()).to.equal(zlibAdler32(large));
    // Bytes of 0xff make the sums grow fastest: the modulo must come before they pass 2^32.
    const ones = Buffer.alloc(100_003, 0xff);
    for (const offset of [0, 1, 2, 3])
      expect(new Adler32().update(ones.subarray(offset)).digest()).to.equal(zlibAdler32(ones.subarray(offset)));
  });

  it('gives the same Adler-32 however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 20_000 }),
        fc.array(fc.nat(20_000), { maxLength: 8 }),
        (data, cuts) => {
          const adler = new Adler32();
          let start = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            const end = Math.min(cut, data.length);
            if (end > start) adler.update(data.subarray(start, end));
            start = Math.max(start, end);
          }
          adler.update(data.subarray(start));
          return adler.digest() === zlibAdler32(data);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('verifies with adler32 when the catalogue has it, md5 when that is all, size alone otherwise', () => {
    expect(checksumToVerify({ bytes: 1, adler32: '00000001', md5: 'a'.repeat(32) })).to.equal('adler32');
    expect(checksumToVerify({ bytes: 1, adler32: null, md5: 'a'.repeat(32) })).to.equal('md5');
    expect(checksumToVerify({ bytes: 1, adler32: null, md5: null })).to.equal(null);
  });

  it('names both values in a mismatch, and compares catalogue checksums whatever their case', () => {
    const expected = { bytes: 3, adler32: '024D0127', md5: null };
    expect(mismatchOf(expected, { bytes: 3, adler32: '024d0127', md5: null })).to.equal(null);
    expect(mismatchOf(expected, { bytes: 3, adler32: '00000001', md5: null })).to.equal(
      'adler32 mismatch: expected 024d0127, got 00000001',
    );
    expect(mismatchOf(expected, { bytes: 4, adler32: '024d0127', md5: null })).to.equal(
      'size mismatch: expected 3 bytes, got 4',
    );
  });

  it('sums a file in chunks', async () => {
    const dir = makeTempDir();
    try {
      const content = randomBytes(2_500_000);
      const path = join(dir.path, 'file');
      writeFileSync(path, content);
      expect(await checksumFile(path, 'adler32', 64 * 1024)).to.deep.equal({
        bytes: content.length,
        adler32: zlibAdler32(content),
        md5: null,
      });
      expect(await checksumFile(path, 'md5')).to.deep.equal({
        bytes: content.length,
        adler32: null,
        md5: createHash('md5').update(content).digest('hex'),
      });
    } finally {
      dir.dispose();
    }
  });
});
