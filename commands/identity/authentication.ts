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

export type LoginCandidates =
  | { outcome: 'unknown-identity' }
  | { outcome: 'wrong-password' }
  | { outcome: 'accounts'; accounts: string[]; defaultAccount: string | undefined };

const passwordMatches = async (state: Identity, subject: LoginSubject): Promise<boolean> =>
  subject.identityType !== 'USERPASS' ||
  (state.status === 'Present' && subject.password !== undefined && (await verifyPassword(subject.password, state.passwordHash)));

/** The accounts an identity may log in to, once its password (for userpass) is verified. */
export const loginCandidates = async (context: CommandContext, subject: LoginSubject): Promise<LoginCandidates> => {
  const state = await loadIdentity(context, subject.identityType, subject.identity);
  if (state.status === 'Absent') return { outcome: 'unknown-identity' };
  if (!(await passwordMatches(state, subject))) return { outcome: 'wrong-password' };
  const accounts = Object.keys(state.accounts).sort();
  const defaultAccount = accounts.find((account) => state.accounts[account]?.isDefault);
  return { outcome: 'accounts', accounts, defaultAccount };
};

/** Whether the identity may log in to this account: mapped, account active, password right. */
export const mayLogIn = async (context: CommandContext, subject: LoginSubject & { account: string }): Promise<boolean> => {
  const account = await loadAccount(context, subject.account);
  if (account.status !== 'ACTIVE') return false;
  const state = await loadIdentity(context, subject.identityType, subject.identity);
  if (state.status === 'Absent' || !(subject.account in state.accounts)) return false;
  return passwordMatches(state, subject);
};
