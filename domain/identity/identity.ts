import { eventTypes, type Event } from '../shared/event.ts';

export const IDENTITY_TYPES = ['X509', 'GSS', 'USERPASS', 'SSH', 'SAML', 'OIDC'] as const;
export type IdentityType = (typeof IDENTITY_TYPES)[number];

/** Identity keys may hold any character (an X.509 DN has spaces, slashes and commas). */
export const identityStreamName = (identityType: IdentityType, identity: string): string =>
  `identity-${identityType}-${identity}`;

export type IdentityAdded = Event<
  'IdentityAdded',
  {
    identity: string;
    identityType: IdentityType;
    email: string | null;
    /** `scrypt$<N>$<r>$<p>$<salt hex>$<hash hex>` for USERPASS identities, else null. */
    passwordHash: string | null;
    addedAt: string;
  }
>;
export type IdentityGrantedToAccount = Event<
  'IdentityGrantedToAccount',
  { identity: string; identityType: IdentityType; account: string; isDefault: boolean; grantedAt: string }
>;
export type IdentityRevokedFromAccount = Event<
  'IdentityRevokedFromAccount',
  { identity: string; identityType: IdentityType; account: string; revokedAt: string }
>;

export type IdentityEvent = IdentityAdded | IdentityGrantedToAccount | IdentityRevokedFromAccount;

export const IDENTITY_EVENT_TYPES = eventTypes<IdentityEvent>({
  IdentityAdded: true,
  IdentityGrantedToAccount: true,
  IdentityRevokedFromAccount: true,
});

export type Identity =
  | { status: 'Absent' }
  | {
      status: 'Present';
      identity: string;
      identityType: IdentityType;
      email: string | null;
      passwordHash: string | null;
      /** Accounts this identity may log in to, with the default flag of each mapping. */
      accounts: Readonly<Record<string, { isDefault: boolean }>>;
    };

export const initialIdentity = (): Identity => ({ status: 'Absent' });

export const evolveIdentity = (state: Identity, event: IdentityEvent): Identity => {
  if (event.type === 'IdentityAdded') {
    return {
      status: 'Present',
      identity: event.data.identity,
      identityType: event.data.identityType,
      email: event.data.email,
      passwordHash: event.data.passwordHash,
      accounts: {},
    };
  }
  if (state.status === 'Absent') return state;
  switch (event.type) {
    case 'IdentityGrantedToAccount':
      return { ...state, accounts: { ...state.accounts, [event.data.account]: { isDefault: event.data.isDefault } } };
    case 'IdentityRevokedFromAccount': {
      const { [event.data.account]: _revoked, ...accounts } = state.accounts;
      return { ...state, accounts };
    }
    default:
      return state;
  }
};
