import { accountStreamName } from '../domain/account/account.ts';
import { accountDecider } from '../domain/account/accountDecider.ts';
import { identityStreamName } from '../domain/identity/identity.ts';
import { identityDecider } from '../domain/identity/identityDecider.ts';
import { Duplicate } from '../domain/shared/errors.ts';
import { hashPassword } from '../infra/security/passwords.ts';
import { loadAccount } from './caller.ts';
import { handleCommand, type CommandContext } from './handleCommand.ts';
import { loadIdentity } from './identity/identityCommands.ts';

/**
 * Creates the root account and its userpass identity at the first start; later starts find them
 * and change nothing (the password of an existing identity is never reset from the environment).
 * Processes starting together on an empty store (two `dms api`, a cluster's primary, `dms admin
 * bootstrap`) may all find root missing: the first append wins, and the others, deciding again on
 * the stream it wrote, find root there. Creating the account they take as done (a Duplicate for
 * root means someone else created it), and granting the identity is a no-op once it maps root.
 */
export const ensureRootAccount = async (
  context: CommandContext,
  root: { username: string; password: string; email: string },
  /** The time of the events, from the runtime's clock. */
  now: Date,
): Promise<'created' | 'existing'> => {
  // Nobody logged in: the service itself acts, at its start.
  const metadata = {
    now,
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
    try {
      await handleCommand(context, accountDecider, accountStreamName('root'), command, options);
      created = true;
    } catch (error) {
      // Another process created root between our read and our append: the account is there.
      if (!(error instanceof Duplicate) || (await loadAccount(context, 'root')).status === 'Absent') throw error;
    }
  }
  const identity = await loadIdentity(context, 'USERPASS', root.username);
  if (identity.status === 'Absent' || !('root' in identity.accounts)) {
    const passwordHash = identity.status === 'Absent' ? await hashPassword(root.password) : null;
    const outcome = await handleCommand(
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
          // Another process granting it at the same time: the identity maps root, nothing to do.
          keepExisting: true,
        },
        metadata,
      },
      options,
    );
    if (outcome.events.length > 0) created = true;
  }
  return created ? 'created' : 'existing';
};
