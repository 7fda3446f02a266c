import sshpk from 'sshpk';

/**
 * SSH signatures of a challenge (Rucio's SSH login): the client signs the challenge text with its
 * private key and sends the signature blob of the SSH wire format (RFC 4253 §6.6: the algorithm's
 * name, then the signature), base64-encoded. The Rucio 39 client signs through paramiko with an
 * RSA key, whose default is `ssh-rsa` (SHA-1); `rsa-sha2-256` and `rsa-sha2-512`, ECDSA on the
 * NIST curves and Ed25519 are accepted too. DSA keys are not: OpenSSH dropped them. Keys and
 * signatures are parsed and checked by sshpk.
 */
const ACCEPTED_KEY_TYPES = ['rsa', 'ecdsa', 'ed25519'] as const;
type AcceptedKeyType = (typeof ACCEPTED_KEY_TYPES)[number];
const ACCEPTED_HASHES: ReadonlySet<string> = new Set(['sha1', 'sha256', 'sha384', 'sha512']);

/** A public key whose signatures are checked, with its type. */
export type SshPublicKey = Readonly<{ key: sshpk.Key; type: AcceptedKeyType }>;

/** The public key of an `authorized_keys` line (`ssh-rsa AAAA... comment`), or undefined when it is none. */
export const parseSshPublicKey = (line: string): SshPublicKey | undefined => {
  try {
    const key = sshpk.parseKey(line.trim(), 'ssh');
    const type = ACCEPTED_KEY_TYPES.find((accepted) => accepted === key.type);
    return type ? { key, type } : undefined;
  } catch {
    return undefined;
  }
};

/** The bytes of base64 text, with or without its padding; undefined when it is not base64. */
export const base64Bytes = (text: string): Buffer | undefined => {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, 'base64');
};

/** Whether `signature` (an SSH signature blob) is `key`'s signature of `message`. */
export const verifySshSignature = ({ key, type }: SshPublicKey, signature: Buffer, message: string): boolean => {
  try {
    const parsed = sshpk.parseSignature(signature, type, 'ssh');
    const hash = parsed.hashAlgorithm;
    if (hash === undefined || !ACCEPTED_HASHES.has(hash)) return false;
    const verifier = key.createVerify(hash);
    verifier.update(message);
    return verifier.verify(parsed);
  } catch {
    return false;
  }
};

/**
 * A public key's fingerprint as OpenSSH prints it (`SHA256:` and the unpadded base64 of the
 * key's SHA-256), what the audit records for an SSH login; undefined when the line holds no key.
 */
export const sshFingerprint = (line: string): string | undefined => {
  try {
    return sshpk.parseKey(line.trim(), 'ssh').fingerprint('sha256').toString();
  } catch {
    return undefined;
  }
};
