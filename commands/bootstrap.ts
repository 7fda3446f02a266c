import { accountStreamName } from '../domain/account/account.ts';
import { createAccount } from '../domain/account/accountDecider.ts';
import { identityStreamName } from '../domain/identity/identity.ts';
import { grantIdentity } from '../domain/identity/identityDecider.ts';
import { hashPassword } from '../infra/security/passwords.ts';
import { accountAggregate, loadAccount } from './caller.ts';
import { handleCommand, type CommandContext } from './handleCommand.ts';
import { identityAggregate } from './identity/identityCommands.ts';

/**
 * Creates the root account and its userpass identity at the first start; later starts find them
 * and change nothing (the password of an existing identity is never reset from the environment).
 * Event ids derive from a fixed cause, so processes starting together create root only once.
 */
export const ensureRootAccount = async (
  context: CommandContext,
  root: { username: string; password: string; email: string },
): Promise<'created' | 'existing'> => {
  if ((await loadAccount(context, 'root')).status !== 'Absent') return 'existing';
  const metadata = { now: new Date(), account: 'root', requestId: 'bootstrap' };
  const options = { metadata, causationId: 'bootstrap-root' };
  await handleCommand(
    context,
    {
      streamName: accountStreamName('root'),
      aggregate: accountAggregate,
      decide: (state) =>
        state.status === 'Absent'
          ? createAccount({ type: 'CreateAccount', data: { account: 'root', accountType: 'SERVICE', email: root.email }, metadata }, state)
          : [],
    },
    options,
  );
  const passwordHash = await hashPassword(root.password);
  await handleCommand(
    context,
    {
      streamName: identityStreamName('USERPASS', root.username),
      aggregate: identityAggregate,
      decide: (state) =>
        state.status === 'Present' && 'root' in state.accounts
          ? []
          : grantIdentity(
              {
                type: 'GrantIdentity',
                data: { identity: root.username, identityType: 'USERPASS', account: 'root', email: root.email, passwordHash, isDefault: true },
                metadata,
              },
              state,
            ),
    },
    options,
  );
  return 'created';
};
