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
  return ['scrypt', DEFAULT_COST.N, DEFAULT_COST.r, DEFAULT_COST.p, salt.toString('hex'), key.toString('hex')].join(
    '$',
  );
};

/**
 * Whether `password` matches the stored hash. Always one scrypt derivation, also when there is no
 * usable hash (an unknown user, an identity without a password): then against a dummy hash of
 * the same cost, so the answer takes as long for a name that does not exist as for a wrong
 * password, and timing tells nobody which names exist.
 */
export const verifyPassword = async (password: string, stored: string | null | undefined): Promise<boolean> => {
  const parsed = parseHash(stored);
  if (!parsed) {
    const dummy = parseHash(await dummyHash())!;
    await derive(password, dummy.salt, dummy.cost);
    return false;
  }
  const actual = await derive(password, parsed.salt, parsed.cost);
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
};

type ParsedHash = Readonly<{ cost: ScryptOptions; salt: Buffer; key: Buffer }>;

const parseHash = (stored: string | null | undefined): ParsedHash | undefined => {
  const parts = stored?.split('$') ?? [];
  const [scheme, n, r, p, saltHex, keyHex] = parts;
  if (parts.length !== 6 || scheme !== 'scrypt' || saltHex === undefined || keyHex === undefined) return undefined;
  return {
    cost: { N: Number(n), r: Number(r), p: Number(p) },
    salt: Buffer.from(saltHex, 'hex'),
    key: Buffer.from(keyHex, 'hex'),
  };
};

let dummy: Promise<string> | undefined;
/** A hash of a random password at the default cost, made once per process when first needed. */
const dummyHash = (): Promise<string> => (dummy ??= hashPassword(randomBytes(32).toString('hex')));
