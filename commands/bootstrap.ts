import { accountStreamName } from '../domain/account/account.ts';
import { accountDecider } from '../domain/account/accountDecider.ts';
import { identityStreamName } from '../domain/identity/identity.ts';
import { identityDecider } from '../domain/identity/identityDecider.ts';
import { hashPassword } from '../infra/security/passwords.ts';
import { loadAccount } from './caller.ts';
import { handleCommand, type CommandContext } from './handleCommand.ts';
import { loadIdentity } from './identity/identityCommands.ts';

/**
 * Creates the root account and its userpass identity at the first start; later starts find them
 * and change nothing (the password of an existing identity is never reset from the environment).
 * Event ids derive from a fixed cause, so processes starting together create root only once: the
 * second append of the same ids is taken as done.
 */
export const ensureRootAccount = async (
  context: CommandContext,
  root: { username: string; password: string; email: string },
): Promise<'created' | 'existing'> => {
  // Nobody logged in: the service itself acts, at its start.
  const metadata = {
    now: new Date(),
    account: 'root',
    requestId: 'bootstrap',
    identity: { kind: 'SERVICE', value: 'bootstrap' },
  };
  const options = { causationId: 'bootstrap-root' };
  let created = false;
  if ((await loadAccount(context, 'root')).status === 'Absent') {
    const command = {
      type: 'CreateAccount',
      data: { account: 'root', accountType: 'SERVICE', email: root.email },
      metadata,
    } as const;
    await handleCommand(context, accountDecider, accountStreamName('root'), command, options);
    created = true;
  }
  const identity = await loadIdentity(context, 'USERPASS', root.username);
  if (identity.status === 'Absent' || !('root' in identity.accounts)) {
    const passwordHash = identity.status === 'Absent' ? await hashPassword(root.password) : null;
    await handleCommand(
      context,
      identityDecider,
      identityStreamName('USERPASS', root.username),
      {
        type: 'GrantIdentity',
        data: {
          identity: root.username,
          identityType: 'USERPASS',
          account: 'root',
          email: root.email,
          passwordHash,
          isDefault: true,
        },
        metadata,
      },
      options,
    );
    created = true;
  }
  return created ? 'created' : 'existing';
};
