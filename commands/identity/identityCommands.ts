import { identityStreamName, type Identity, type IdentityType } from '../../domain/identity/identity.ts';
import { identityDecider, type IdentityCommand } from '../../domain/identity/identityDecider.ts';
import { ACCOUNT_PERMISSIONS, requirePermission } from '../../domain/permission/policy.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { hashPassword } from '../../infra/security/passwords.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommand, loadAggregate, type CommandContext } from '../handleCommand.ts';

export const loadIdentity = (
  context: CommandContext,
  identityType: IdentityType,
  identity: string,
): Promise<Identity> => loadAggregate(context, identityDecider, identityStreamName(identityType, identity));

const onIdentity = (context: CommandContext, command: IdentityCommand) =>
  handleCommand(
    context,
    identityDecider,
    identityStreamName(command.data.identityType, command.data.identity),
    command,
  );

const requireActiveAccount = async (context: CommandContext, account: string): Promise<void> => {
  const state = await loadAccount(context, account);
  if (state.status !== 'ACTIVE') throw new AccountNotFound(`Account '${account}' does not exist.`);
};

/** Only a userpass identity keeps a password; it is hashed before it goes anywhere near an event. */
export const passwordHashFor = async (identityType: IdentityType, password: string | null | undefined) =>
  identityType === 'USERPASS' && password ? hashPassword(password) : null;

/** POST /accounts/{account}/identities: map an identity (created when missing) to an account. */
export const grantIdentity = async (
  context: CommandContext,
  data: {
    identity: string;
    identityType: IdentityType;
    account: string;
    email: string | null;
    password?: string | null;
    isDefault: boolean;
  },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addIdentity(caller), caller, 'add account identity');
  await requireActiveAccount(context, data.account);
  const existing = await loadIdentity(context, data.identityType, data.identity);
  const passwordHash = existing.status === 'Absent' ? await passwordHashFor(data.identityType, data.password) : null;
  const { identity, identityType, account, email, isDefault } = data;
  return onIdentity(context, {
    type: 'GrantIdentity',
    data: { identity, identityType, account, email, passwordHash, isDefault },
    metadata,
  });
};

/** PUT /identities/{account}/{userpass|x509|gss}: create a new identity for an account. */
export const registerIdentity = async (
  context: CommandContext,
  data: {
    identity: string;
    identityType: IdentityType;
    account: string;
    email: string | null;
    password?: string | null;
  },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addIdentity(caller), caller, 'add account identity');
  await requireActiveAccount(context, data.account);
  const passwordHash = await passwordHashFor(data.identityType, data.password);
  const { identity, identityType, account, email } = data;
  return onIdentity(context, {
    type: 'RegisterIdentity',
    data: { identity, identityType, account, email, passwordHash },
    metadata,
  });
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
  return onIdentity(context, { type: 'RevokeIdentity', data, metadata });
};
