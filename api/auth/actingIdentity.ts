import type { IdentityType } from '../../domain/identity/identity.ts';
import type { ActingIdentity } from '../../domain/shared/event.ts';
import { sshFingerprint } from '../../infra/security/sshSignatures.ts';

/** Fingerprints already computed, by key: a session's key is parsed once, not on every write. */
const fingerprints = new Map<string, string>();
const FINGERPRINTS_KEPT = 1000;

/**
 * The identity a request's token was issued to, as the events it causes record it: its type and
 * value, except an SSH key, which is recorded by its fingerprint (the key itself is long, and the
 * fingerprint is what operators compare with `ssh-keygen -l`).
 */
export const actingIdentity = (type: IdentityType, identity: string): ActingIdentity => {
  if (type !== 'SSH') return { kind: type, value: identity };
  let fingerprint = fingerprints.get(identity);
  if (fingerprint === undefined) {
    fingerprint = sshFingerprint(identity) ?? identity;
    if (fingerprints.size >= FINGERPRINTS_KEPT) fingerprints.clear();
    fingerprints.set(identity, fingerprint);
  }
  return { kind: type, value: fingerprint };
};
