import type { Identity, IdentityType } from '../../domain/identity/identity.ts';
import { verifyPassword } from '../../infra/security/passwords.ts';
import { loadAccount } from '../caller.ts';
import type { CommandContext } from '../handleCommand.ts';
import { loadIdentity } from './identityCommands.ts';

/**
 * The checks behind the login routes. Identities and accounts are read from their own streams,
 * so a login works the moment its identity was granted.
 */
export type LoginSubject = Readonly<{ identityType: IdentityType; identity: string; password?: string }>;

/** An identity as a login attempt found it, its credentials checked once. */
export type CheckedIdentity = Readonly<{
  state: Identity;
  credentialsValid: boolean;
  /** Authenticated by the proxy (x509, gss) rather than by a password checked here. */
  vouched: boolean;
}>;

export type LoginCandidates =
  /** A DN or principal (vouched for by the proxy) that names no identity. */
  | { outcome: 'unknown-identity' }
  /** A username and password that do not match, whether the username exists or not. */
  | { outcome: 'wrong-credentials' }
  | { outcome: 'accounts'; accounts: string[]; defaultAccount: string | undefined };

/**
 * Reads the identity and checks its credentials: for userpass exactly one scrypt derivation per
 * attempt, whether the username exists, has a password, or the password is right, so every
 * failure costs the same time (infra/security/passwords.ts). Other identity types are vouched
 * for by the proxy that authenticated them.
 */
export const checkIdentity = async (context: CommandContext, subject: LoginSubject): Promise<CheckedIdentity> => {
  const state = await loadIdentity(context, subject.identityType, subject.identity);
  if (subject.identityType !== 'USERPASS')
    return { state, credentialsValid: state.status === 'Present', vouched: true };
  const matches = await verifyPassword(subject.password ?? '', state.status === 'Present' ? state.passwordHash : null);
  return {
    state,
    credentialsValid: matches && state.status === 'Present' && subject.password !== undefined,
    vouched: false,
  };
};

/** The accounts a checked identity may log in to. */
export const loginCandidates = (checked: CheckedIdentity): LoginCandidates => {
  const { state } = checked;
  if (!checked.credentialsValid || state.status === 'Absent')
    return checked.vouched ? { outcome: 'unknown-identity' } : { outcome: 'wrong-credentials' };
  const accounts = Object.keys(state.accounts).sort();
  const defaultAccount = accounts.find((account) => state.accounts[account]?.isDefault);
  return { outcome: 'accounts', accounts, defaultAccount };
};

/** Whether the identity may log in to this account: credentials right, mapped, account active. */
export const mayLogIn = async (
  context: CommandContext,
  checked: CheckedIdentity,
  account: string,
): Promise<boolean> => {
  if (!checked.credentialsValid || checked.state.status === 'Absent' || !(account in checked.state.accounts))
    return false;
  return (await loadAccount(context, account)).status === 'ACTIVE';
};
