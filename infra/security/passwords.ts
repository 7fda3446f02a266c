import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Salted scrypt password hashes, stored as `scrypt$N$r$p$<salt hex>$<hash hex>` so the cost can
 * be raised later without breaking stored hashes. N=2^15, r=8, p=1 (about 50 ms and 32 MiB here).
 */
const DEFAULT_COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

const derive = (password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 128 * options.N! * options.r! * 2 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16);
  const key = await derive(password, salt, DEFAULT_COST);
  return ['scrypt', DEFAULT_COST.N, DEFAULT_COST.r, DEFAULT_COST.p, salt.toString('hex'), key.toString('hex')].join('$');
};

export const verifyPassword = async (password: string, stored: string | null | undefined): Promise<boolean> => {
  const parts = stored?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltHex, keyHex] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyHex, 'hex');
  const actual = await derive(password, Buffer.from(saltHex, 'hex'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
};
