import { identityDecider } from '../../domain/identity/identityDecider.ts';
import type { IdentityEvent } from '../../domain/identity/identity.ts';
import { Duplicate, IdentityError } from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(identityDecider);
const key = { identity: 'jdoe', identityType: 'USERPASS' } as const;
const added: IdentityEvent = {
  type: 'IdentityAdded',
  data: { ...key, email: 'j@x.org', passwordHash: 'scrypt$h', addedAt: AT },
};
const grantedTo = (account: string, isDefault = false): IdentityEvent => ({
  type: 'IdentityGrantedToAccount',
  data: { ...key, account, isDefault, grantedAt: AT },
});

describe('identity decider', () => {
  const grant = (account: string, passwordHash: string | null = 'scrypt$h', isDefault = false) =>
    ({
      type: 'GrantIdentity',
      data: { ...key, account, email: 'j@x.org', passwordHash, isDefault },
      metadata: metadata(),
    }) as const;

  it('creates a missing identity when granting it to an account', () =>
    given([])
      .when(grant('jdoe', 'scrypt$h', true))
      .then([added, grantedTo('jdoe', true)]));

  it('grants an existing identity to another account without creating it again', () =>
    given([added, grantedTo('jdoe')])
      .when(grant('team'))
      .then([grantedTo('team')]));

  it('refuses a mapping that exists already', () =>
    given([added, grantedTo('jdoe')])
      .when(grant('jdoe'))
      .thenThrows(Duplicate, /Identity pair 'jdoe','USERPASS' already exists!/));

  describe('when a new identity is granted', () => {
    const dn = '/DC=org/CN=John Doe';
    it('needs a password for a userpass identity', () =>
      given([])
        .when(grant('jdoe', null))
        .thenThrows(IdentityError, /You must provide a password!/));
    it('needs none for an x509 identity', () =>
      given([])
        .when({
          type: 'GrantIdentity',
          data: {
            identity: dn,
            identityType: 'X509',
            account: 'jdoe',
            email: 'j@x.org',
            passwordHash: null,
            isDefault: false,
          },
          metadata: metadata(),
        })
        .then([
          {
            type: 'IdentityAdded',
            data: { identity: dn, identityType: 'X509', email: 'j@x.org', passwordHash: null, addedAt: AT },
          },
          {
            type: 'IdentityGrantedToAccount',
            data: { identity: dn, identityType: 'X509', account: 'jdoe', isDefault: false, grantedAt: AT },
          },
        ]));
  });

  describe('when an identity is registered', () => {
    const register = {
      type: 'RegisterIdentity',
      data: { ...key, account: 'jdoe', email: 'j@x.org', passwordHash: 'scrypt$h' },
      metadata: metadata(),
    } as const;
    it('registers one that does not exist yet', () =>
      given([])
        .when(register)
        .then([added, grantedTo('jdoe')]));
    it('refuses one that exists', () => given([added]).when(register).thenThrows(Duplicate));
  });

  describe('when a mapping is revoked', () => {
    const revoke = { type: 'RevokeIdentity', data: { ...key, account: 'jdoe' }, metadata: metadata() } as const;
    it('revokes it', () =>
      given([added, grantedTo('jdoe')])
        .when(revoke)
        .then([{ type: 'IdentityRevokedFromAccount', data: { ...key, account: 'jdoe', revokedAt: AT } }]));
    it('refuses one that does not exist', () =>
      given([added])
        .when(revoke)
        .thenThrows(IdentityError, /Identity \('jdoe','USERPASS'\) does not exist!/));
  });
});
