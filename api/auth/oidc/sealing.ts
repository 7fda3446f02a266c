import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets the login flow must keep for a while (a service token waiting for its client, a
 * provider's refresh token) are stored sealed with a key derived from another secret only the
 * client holds (the code it polls with, its service token), and found by that secret's SHA-256.
 * A copy of the read store thus yields no usable token.
 */
export const lookupKey = (secret: string): string => createHash('sha256').update(secret).digest('hex');

const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, '', 'dms oidc sealing', 32));

export const seal = (plaintext: string, secret: string): string => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url')).join('.');
};

/** The plaintext, or undefined when the secret is not the one it was sealed with. */
export const unseal = (sealed: string, secret: string): string | undefined => {
  const [iv, tag, data] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !data) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
};

/** A random string of URL-safe characters (states, nonces, codes). */
export const randomCode = (bytes = 32): string => randomBytes(bytes).toString('base64url');
