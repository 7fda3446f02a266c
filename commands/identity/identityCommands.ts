import { identityStreamName, evolveIdentity, initialIdentity, type Identity, type IdentityEvent, type IdentityType } from '../../domain/identity/identity.ts';
import { grantIdentity as decideGrant, registerIdentity as decideRegister, revokeIdentity as decideRevoke } from '../../domain/identity/identityDecider.ts';
import { ACCOUNT_PERMISSIONS, requirePermission } from '../../domain/permission/policy.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { hashPassword } from '../../infra/security/passwords.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommand, loadState, type Aggregate, type CommandContext } from '../handleCommand.ts';

export const identityAggregate: Aggregate<Identity, IdentityEvent> = {
  name: 'identity',
  initialState: initialIdentity,
  evolve: evolveIdentity,
};

export const loadIdentity = async (context: CommandContext, identityType: IdentityType, identity: string): Promise<Identity> =>
  (await loadState(context, identityStreamName(identityType, identity), identityAggregate)).state;

const requireActiveAccount = async (context: CommandContext, account: string): Promise<void> => {
  const state = await loadAccount(context, account);
  if (state.status !== 'ACTIVE') throw new AccountNotFound(`Account '${account}' does not exist.`);
};

/** Only a userpass identity keeps a password; it is hashed before it goes anywhere near an event. */
const passwordHashFor = async (identityType: IdentityType, password: string | null | undefined) =>
  identityType === 'USERPASS' && password ? hashPassword(password) : null;

/** POST /accounts/{account}/identities: map an identity (created when missing) to an account. */
export const grantIdentity = async (
  context: CommandContext,
  data: { identity: string; identityType: IdentityType; account: string; email: string | null; password?: string | null; isDefault: boolean },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addIdentity(caller), caller, 'add account identity');
  await requireActiveAccount(context, data.account);
  const existing = await loadIdentity(context, data.identityType, data.identity);
  const passwordHash = existing.status === 'Absent' ? await passwordHashFor(data.identityType, data.password) : null;
  return handleCommand(
    context,
    {
      streamName: identityStreamName(data.identityType, data.identity),
      aggregate: identityAggregate,
      decide: (state) =>
        decideGrant(
          {
            type: 'GrantIdentity',
            data: { identity: data.identity, identityType: data.identityType, account: data.account, email: data.email, passwordHash, isDefault: data.isDefault },
            metadata,
          },
          state,
        ),
    },
    { metadata },
  );
};

/** PUT /identities/{account}/{userpass|x509|gss}: create a new identity for an account. */
export const registerIdentity = async (
  context: CommandContext,
  data: { identity: string; identityType: IdentityType; account: string; email: string | null; password?: string | null },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addIdentity(caller), caller, 'add account identity');
  await requireActiveAccount(context, data.account);
  const passwordHash = await passwordHashFor(data.identityType, data.password);
  return handleCommand(
    context,
    {
      streamName: identityStreamName(data.identityType, data.identity),
      aggregate: identityAggregate,
      decide: (state) =>
        decideRegister(
          {
            type: 'RegisterIdentity',
            data: { identity: data.identity, identityType: data.identityType, account: data.account, email: data.email, passwordHash },
            metadata,
          },
          state,
        ),
    },
    { metadata },
  );
};

/** DELETE /accounts/{account}/identities: remove the mapping between an identity and an account. */
export const revokeIdentity = async (
  context: CommandContext,
  data: { identity: string; identityType: IdentityType; account: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.deleteIdentity(caller), caller, 'delete account identity');
  const account = await loadAccount(context, data.account);
  if (account.status === 'Absent') throw new AccountNotFound(`Account '${data.account}' does not exist.`);
  return handleCommand(
    context,
    {
      streamName: identityStreamName(data.identityType, data.identity),
      aggregate: identityAggregate,
      decide: (state) => decideRevoke({ type: 'RevokeIdentity', data, metadata }, state),
    },
    { metadata },
  );
};
