import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../logger.ts';
import { fileVersionOf } from '../fileVersion.ts';

/**
 * The storage keys URL signing uses, from a JSON file in the format of Rucio's `rse-accounts.cfg`
 * (named by DMS_RSE_ACCOUNTS): an object whose keys are RSE ids or names, each naming that RSE's
 * keys. S3: `access_key`, `secret_key`, `region` (default us-east-1), `signature_version`
 * (`s3v4`, the only one the AWS SDK signs with); Swift: `tempurl_key`, and `tempurl_digest` (`sha1`,
 * as Rucio signs, or `sha256`); GCS: `service_account_file`, a Google service-account key file
 * (its `client_email` and `private_key`), relative to this file. Other keys are kept out of the
 * way, as Rucio's file may hold keys for other tools. The file is read again when it, or a key
 * file it names, changes.
 */

export type S3Keys = Readonly<{ accessKey: string; secretKey: string; region: string }>;
export type SwiftKeys = Readonly<{ tempUrlKey: string; digest: 'sha1' | 'sha256' }>;
export type GcsKeys = Readonly<{ clientEmail: string; privateKey: KeyObject }>;
export type RseKeys = Readonly<{ s3?: S3Keys; swift?: SwiftKeys; gcs?: GcsKeys }>;

const text = z.string().min(1);

const entrySchema = z
  .looseObject({
    access_key: text.optional(),
    secret_key: text.optional(),
    region: text.optional(),
    signature_version: z.literal('s3v4', { error: 'only s3v4 (AWS Signature Version 4) is supported' }).optional(),
    tempurl_key: text.optional(),
    tempurl_digest: z.enum(['sha1', 'sha256']).optional(),
    service_account_file: text.optional(),
  })
  .refine((entry) => (entry.access_key === undefined) === (entry.secret_key === undefined), {
    error: 'access_key and secret_key go together',
  });

const fileSchema = z.record(z.string(), entrySchema);

const serviceAccountSchema = z.looseObject({ client_email: text, private_key: text });

/** Thrown when the file or a key file it names cannot be read or is not as described above. */
export class RseAccountsInvalid extends Error {
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'RseAccountsInvalid';
  }
}

type Loaded = Readonly<{ keys: ReadonlyMap<string, RseKeys>; files: readonly string[] }>;

const readJson = (path: string): unknown => {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RseAccountsInvalid(path, `cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    return JSON.parse(content);
  } catch (error) {
    throw new RseAccountsInvalid(path, `is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
};

const problemsOf = (error: z.ZodError): string =>
  error.issues.map((issue) => `${issue.path.map(String).join('.') || '(top)'}: ${issue.message}`).join('; ');

const gcsKeys = (path: string): GcsKeys => {
  const parsed = serviceAccountSchema.safeParse(readJson(path));
  if (!parsed.success) throw new RseAccountsInvalid(path, problemsOf(parsed.error));
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(parsed.data.private_key);
  } catch (error) {
    throw new RseAccountsInvalid(
      path,
      `private_key is no private key (${error instanceof Error ? error.message : ''})`,
    );
  }
  // GCS signs with RSA-SHA256 only.
  if (privateKey.asymmetricKeyType !== 'rsa') throw new RseAccountsInvalid(path, 'private_key is no RSA key');
  return { clientEmail: parsed.data.client_email, privateKey };
};

/** Reads and checks the file, and every service-account file it names. */
export const readRseAccounts = (path: string): Loaded => {
  const parsed = fileSchema.safeParse(readJson(path));
  if (!parsed.success) throw new RseAccountsInvalid(path, problemsOf(parsed.error));
  const keys = new Map<string, RseKeys>();
  const files = [path];
  for (const [rse, entry] of Object.entries(parsed.data)) {
    const gcsFile = entry.service_account_file ? resolve(dirname(path), entry.service_account_file) : undefined;
    if (gcsFile) files.push(gcsFile);
    keys.set(rse, {
      ...(entry.access_key && entry.secret_key
        ? { s3: { accessKey: entry.access_key, secretKey: entry.secret_key, region: entry.region ?? 'us-east-1' } }
        : {}),
      ...(entry.tempurl_key
        ? { swift: { tempUrlKey: entry.tempurl_key, digest: entry.tempurl_digest ?? 'sha1' } }
        : {}),
      ...(gcsFile ? { gcs: gcsKeys(gcsFile) } : {}),
    });
  }
  return { keys, files };
};

/** The keys of the file named by DMS_RSE_ACCOUNTS, read again when it or a key file it names changes. */
export class RseAccounts {
  private loaded: Loaded;
  private versions: string;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {
    this.loaded = readRseAccounts(path);
    this.versions = this.loaded.files.map(fileVersionOf).join('|');
  }

  /** The keys of an RSE, found by its id, else by its name. */
  keysFor(rse: Readonly<{ id: string; name: string }>): RseKeys | undefined {
    this.refresh();
    return this.loaded.keys.get(rse.id) ?? this.loaded.keys.get(rse.name);
  }

  /** One stat per file named: cheap next to a signature, and a changed file is seen at its next use. */
  private refresh(): void {
    const versions = this.loaded.files.map(fileVersionOf).join('|');
    if (versions === this.versions) return;
    this.versions = versions;
    try {
      this.loaded = readRseAccounts(this.path);
      this.versions = this.loaded.files.map(fileVersionOf).join('|');
      this.logger.info({ path: this.path, rses: this.loaded.keys.size }, 'read the RSE accounts file again');
    } catch (error) {
      // Half-written or broken: the keys read before stay in use until the file is right again.
      this.logger.error(
        { err: error },
        'the RSE accounts file changed but cannot be used; keeping the keys read before',
      );
    }
  }
}
