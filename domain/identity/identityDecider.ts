import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import { Duplicate, IdentityError } from '../shared/errors.ts';
import { evolveIdentity, initialIdentity, type Identity, type IdentityEvent, type IdentityType } from './identity.ts';

type IdentityKey = { identity: string; identityType: IdentityType };

/**
 * Maps an identity to an account, creating the identity first when it does not exist yet. An
 * existing mapping is refused (Duplicate), unless `keepExisting` (import) makes it a no-op.
 */
export type GrantIdentity = Command<
  'GrantIdentity',
  IdentityKey & {
    account: string;
    email: string | null;
    passwordHash: string | null;
    isDefault: boolean;
    keepExisting?: boolean;
  }
>;
/** Creates a new identity and maps it to an account (PUT /identities/{account}/{type}). */
export type RegisterIdentity = Command<
  'RegisterIdentity',
  IdentityKey & { account: string; email: string | null; passwordHash: string | null }
>;
export type RevokeIdentity = Command<'RevokeIdentity', IdentityKey & { account: string }>;

export type IdentityCommand = GrantIdentity | RegisterIdentity | RevokeIdentity;

const added = (data: GrantIdentity['data'] | RegisterIdentity['data'], at: string): IdentityEvent => {
  if (data.identityType === 'USERPASS' && !data.passwordHash) throw new IdentityError('You must provide a password!');
  return {
    type: 'IdentityAdded',
    data: {
      identity: data.identity,
      identityType: data.identityType,
      email: data.email,
      passwordHash: data.identityType === 'USERPASS' ? data.passwordHash : null,
      addedAt: at,
    },
  };
};

const granted = (data: IdentityKey & { account: string }, isDefault: boolean, at: string): IdentityEvent => ({
  type: 'IdentityGrantedToAccount',
  data: { identity: data.identity, identityType: data.identityType, account: data.account, isDefault, grantedAt: at },
});

export const grantIdentity = ({ data, metadata }: GrantIdentity, state: Identity): IdentityEvent[] => {
  const at = metadata.now.toISOString();
  if (state.status === 'Present' && data.account in state.accounts) {
    if (data.keepExisting) return [];
    throw new Duplicate(`Identity pair '${data.identity}','${data.identityType}' already exists!`);
  }
  const creation = state.status === 'Absent' ? [added(data, at)] : [];
  return [...creation, granted(data, data.isDefault, at)];
};

export const registerIdentity = ({ data, metadata }: RegisterIdentity, state: Identity): IdentityEvent[] => {
  if (state.status === 'Present')
    throw new Duplicate(`Identity pair '${data.identity}','${data.identityType}' already exists!`);
  const at = metadata.now.toISOString();
  return [added(data, at), granted(data, false, at)];
};

export const revokeIdentity = ({ data, metadata }: RevokeIdentity, state: Identity): IdentityEvent[] => {
  if (state.status === 'Absent' || !(data.account in state.accounts)) {
    throw new IdentityError(`Identity ('${data.identity}','${data.identityType}') does not exist!`);
  }
  return [
    {
      type: 'IdentityRevokedFromAccount',
      data: {
        identity: data.identity,
        identityType: data.identityType,
        account: data.account,
        revokedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const decideIdentity = (command: IdentityCommand, state: Identity): IdentityEvent[] => {
  switch (command.type) {
    case 'GrantIdentity':
      return grantIdentity(command, state);
    case 'RegisterIdentity':
      return registerIdentity(command, state);
    case 'RevokeIdentity':
      return revokeIdentity(command, state);
    default:
      return unknownCommand('identity', command);
  }
};

export const identityDecider: Decider<Identity, IdentityCommand, IdentityEvent> = {
  name: 'identity',
  initialState: initialIdentity,
  evolve: evolveIdentity,
  decide: decideIdentity,
};
