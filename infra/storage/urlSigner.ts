import type { S3Client } from '@aws-sdk/client-s3';
import { createHash, createHmac, sign } from 'node:crypto';
import type { GcsKeys, RseAccounts, S3Keys, SwiftKeys } from '../security/rseAccounts.ts';

/**
 * Signed URLs for cloud storage (Rucio's core/credential.py): a URL any HTTP client may use for
 * one operation until it expires, without keys of its own. S3: a presigned URL (AWS Signature
 * Version 4) made by the AWS SDK's own presigner; GCS: a V4 signed URL (GOOG4-RSA-SHA256) with a
 * service account's key; Swift: a temporary URL (HMAC of method, expiry and path). Nothing is
 * sent anywhere: signing is computation on the keys of the RSE accounts file.
 */

export const SIGN_URL_SERVICES = ['gcs', 's3', 'swift'] as const;
export type SignUrlService = (typeof SIGN_URL_SERVICES)[number];
export const SIGN_URL_OPERATIONS = ['read', 'write', 'delete'] as const;
export type SignUrlOperation = (typeof SIGN_URL_OPERATIONS)[number];

/** The longest lifetime S3 and GCS accept for a signed URL: seven days. */
export const MAX_SIGNATURE_LIFETIME = 7 * 24 * 3600;

export type SignUrlRequest = Readonly<{
  rse: Readonly<{ id: string; name: string }>;
  service: SignUrlService;
  operation: SignUrlOperation;
  url: string;
  /** Seconds, 1 to MAX_SIGNATURE_LIFETIME. */
  lifetime: number;
  /** The RSE's `s3_url_style` attribute: `path` (the default) or `host`. */
  s3UrlStyle?: string;
  now: Date;
}>;

/** Why a URL was not signed: the request cannot be (`unsupported`), or no keys are configured for it (`keys`). */
export class UrlNotSigned extends Error {
  constructor(
    readonly reason: 'unsupported' | 'keys',
    message: string,
  ) {
    super(message);
    this.name = 'UrlNotSigned';
  }
}

const METHODS: Readonly<Record<SignUrlOperation, string>> = { read: 'GET', write: 'PUT', delete: 'DELETE' };

/** Signs URLs with the keys of the RSE accounts file; without one, every signature is refused. */
export class UrlSigner {
  private readonly s3Clients = new Map<string, S3Client>();

  constructor(private readonly accounts: RseAccounts | undefined) {}

  async sign(request: SignUrlRequest): Promise<string> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new UrlNotSigned('unsupported', `${JSON.stringify(request.url)} is not a URL`);
    }
    if (!this.accounts) throw new UrlNotSigned('keys', 'no RSE accounts file is configured (DMS_RSE_ACCOUNTS)');
    const keys = this.accounts.keysFor(request.rse);
    const missing = (what: string) =>
      new UrlNotSigned('keys', `${this.accounts!.path} holds no ${what} for the RSE ${request.rse.name}`);
    switch (request.service) {
      case 's3':
        if (!keys?.s3) throw missing('S3 keys (access_key, secret_key)');
        return this.signS3(request, url, keys.s3);
      case 'gcs':
        if (!keys?.gcs) throw missing('GCS service account (service_account_file)');
        return signGcs(request, url, keys.gcs);
      case 'swift':
        if (!keys?.swift) throw missing('Swift key (tempurl_key)');
        return signSwift(request, url, keys.swift);
    }
  }

  private async signS3(request: SignUrlRequest, url: URL, keys: S3Keys): Promise<string> {
    const style = request.s3UrlStyle ?? 'path';
    const segments = url.pathname.split('/');
    let bucket: string;
    let key: string;
    let endpointHost: string;
    if (style === 'path') {
      if (segments.length < 3 || !segments[1]) throw new UrlNotSigned('unsupported', 'Not a valid Path-Style S3 URL');
      bucket = segments[1];
      key = segments.slice(2).join('/');
      endpointHost = url.hostname;
    } else if (style === 'host') {
      const labels = url.hostname.split('.');
      if (labels.length < 2 || segments.length < 2)
        throw new UrlNotSigned('unsupported', 'Not a valid Host-Style S3 URL');
      bucket = labels[0]!;
      key = segments.slice(1).join('/');
      // The SDK puts the bucket in front of the endpoint's host itself.
      endpointHost = labels.slice(1).join('.');
    } else {
      throw new UrlNotSigned('unsupported', 'Not a valid RSE S3 URL style (allowed values: path|host)');
    }
    const endpoint = `https://${endpointHost}:${url.port || '443'}`;
    // The AWS SDK is a megabyte of code: loaded at the first S3 signature, not by every process.
    const [s3, { getSignedUrl }] = await Promise.all([
      import('@aws-sdk/client-s3'),
      import('@aws-sdk/s3-request-presigner'),
    ]);
    const client = this.s3Client(s3.S3Client, endpoint, keys, style === 'path');
    // The URL's path is percent-encoded; the SDK encodes the bucket and key itself.
    const input = { Bucket: decoded(bucket), Key: decoded(key) };
    const command =
      request.operation === 'read'
        ? new s3.GetObjectCommand(input)
        : request.operation === 'write'
          ? new s3.PutObjectCommand(input)
          : new s3.DeleteObjectCommand(input);
    try {
      return await getSignedUrl(client, command, { expiresIn: request.lifetime, signingDate: request.now });
    } catch (error) {
      // The SDK refuses what cannot name an S3 object (a bucket name S3 does not allow, ...).
      throw new UrlNotSigned(
        'unsupported',
        `Not a valid S3 URL: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private s3Client(Client: typeof S3Client, endpoint: string, keys: S3Keys, pathStyle: boolean): S3Client {
    const id = [endpoint, keys.region, keys.accessKey, keys.secretKey, pathStyle].join(' ');
    let client = this.s3Clients.get(id);
    if (!client) {
      client = new Client({
        endpoint,
        region: keys.region,
        forcePathStyle: pathStyle,
        credentials: { accessKeyId: keys.accessKey, secretAccessKey: keys.secretKey },
        // Only what S3 needs: no checksum parameters that other S3 servers may not know.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      this.s3Clients.set(id, client);
    }
    return client;
  }
}

/** A percent-encoded part of a URL's path, decoded; a malformed one is no S3 URL. */
const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new UrlNotSigned('unsupported', `Not a valid S3 URL: ${JSON.stringify(text)} is not percent-encoded UTF-8`);
  }
};

/** RFC 3986 encoding: everything but unreserved characters percent-encoded, in UTF-8. */
const encodeRfc3986 = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/** A URL path with each segment encoded once, as GCS canonical requests want it. */
const canonicalPath = (pathname: string): string =>
  pathname
    .split('/')
    .map((segment) => {
      try {
        return encodeRfc3986(decodeURIComponent(segment));
      } catch {
        return encodeRfc3986(segment);
      }
    })
    .join('/');

const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `20261122T100000Z` and `20261122`. */
const stamps = (now: Date): { datetime: string; date: string } => {
  const datetime = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { datetime, date: datetime.slice(0, 8) };
};

/** GCS V4 signing with a service account's RSA key (cloud.google.com/storage/docs/access-control/signing-urls-manually). */
const signGcs = (request: SignUrlRequest, url: URL, keys: GcsKeys): string => {
  const { datetime, date } = stamps(request.now);
  const scope = `${date}/auto/storage/goog4_request`;
  const path = canonicalPath(url.pathname);
  const query = [
    ['X-Goog-Algorithm', 'GOOG4-RSA-SHA256'],
    ['X-Goog-Credential', `${keys.clientEmail}/${scope}`],
    ['X-Goog-Date', datetime],
    ['X-Goog-Expires', String(request.lifetime)],
    ['X-Goog-SignedHeaders', 'host'],
  ]
    .map(([name, value]) => `${encodeRfc3986(name!)}=${encodeRfc3986(value!)}`)
    .join('&');
  const canonicalRequest = [
    METHODS[request.operation],
    path,
    query,
    `host:${url.host}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = ['GOOG4-RSA-SHA256', datetime, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = sign('sha256', Buffer.from(stringToSign), keys.privateKey).toString('hex');
  return `https://${url.host}${path}?${query}&X-Goog-Signature=${signature}`;
};

/** An OpenStack Swift temporary URL (its `tempurl` middleware), as Rucio makes it. */
const signSwift = (request: SignUrlRequest, url: URL, keys: SwiftKeys): string => {
  const expires = Math.floor(request.now.getTime() / 1000) + request.lifetime;
  const body = `${METHODS[request.operation]}\n${expires}\n${url.pathname}`;
  const signature = createHmac(keys.digest, keys.tempUrlKey).update(body).digest('hex');
  return `https://${url.hostname}${url.pathname}?temp_url_sig=${signature}&temp_url_expires=${expires}`;
};
