import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/**
 * SSH keys and signatures made in the test with node:crypto alone, in the SSH wire format (RFC
 * 4253 §6.6, RFC 5656, RFC 8709): an implementation independent of the service's (sshpk), so a
 * test of the login checks one against the other.
 */
export type SshKeyType = 'rsa' | 'ecdsa' | 'ed25519';
export type RsaSignatureAlgorithm = 'ssh-rsa' | 'rsa-sha2-256' | 'rsa-sha2-512';

const uint32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
};
/** An SSH `string`: its length, then its bytes. */
const sshString = (bytes: Buffer | string): Buffer => {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return Buffer.concat([uint32(data.length), data]);
};
/** An SSH `mpint` from unsigned big-endian bytes: no leading zeros, one more when the top bit is set. */
const mpint = (unsigned: Buffer): Buffer => {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start += 1;
  const trimmed = unsigned.subarray(start);
  return sshString(trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
};
const fromBase64Url = (text: string | undefined): Buffer => Buffer.from(text!, 'base64url');

export type SshKeyPair = Readonly<{
  type: SshKeyType;
  /** The `authorized_keys` line: what an SSH identity holds. */
  publicLine: string;
  privateKey: KeyObject;
  /** The private key as PEM (RSA: PKCS#1, which paramiko reads: the Rucio client's `ssh_private_key`). */
  privatePem: string;
  /** The signature blob of `message`, base64 as the client sends it in X-Svc-SSH-Signature. */
  sign(message: string, algorithm?: RsaSignatureAlgorithm): string;
}>;

export const sshKeyPair = (type: SshKeyType, comment = 'test@dms'): SshKeyPair => {
  const { publicKey, privateKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ecdsa'
        ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
        : generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const name = type === 'rsa' ? 'ssh-rsa' : type === 'ecdsa' ? 'ecdsa-sha2-nistp256' : 'ssh-ed25519';
  const blob =
    type === 'rsa'
      ? Buffer.concat([sshString(name), mpint(fromBase64Url(jwk.e)), mpint(fromBase64Url(jwk.n))])
      : type === 'ecdsa'
        ? Buffer.concat([
            sshString(name),
            sshString('nistp256'),
            sshString(Buffer.concat([Buffer.from([4]), fromBase64Url(jwk.x), fromBase64Url(jwk.y)])),
          ])
        : Buffer.concat([sshString(name), sshString(fromBase64Url(jwk.x))]);
  const signWith = (message: string, algorithm: RsaSignatureAlgorithm = 'ssh-rsa'): string => {
    const data = Buffer.from(message);
    if (type === 'rsa') {
      const hash = { 'ssh-rsa': 'sha1', 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' }[algorithm];
      return Buffer.concat([sshString(algorithm), sshString(sign(hash, data, privateKey))]).toString('base64');
    }
    if (type === 'ecdsa') {
      const raw = sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      const rs = Buffer.concat([mpint(raw.subarray(0, 32)), mpint(raw.subarray(32))]);
      return Buffer.concat([sshString(name), sshString(rs)]).toString('base64');
    }
    return Buffer.concat([sshString(name), sshString(sign(null, data, privateKey))]).toString('base64');
  };
  return {
    type,
    publicLine: `${name} ${blob.toString('base64')} ${comment}`,
    privateKey,
    privatePem: String(privateKey.export({ format: 'pem', type: type === 'rsa' ? 'pkcs1' : 'pkcs8' })),
    sign: signWith,
  };
};
