import { hostname, userInfo } from 'node:os';
import type { ActingIdentity } from '../domain/shared/event.ts';

/**
 * Who acts through the command line: whoever runs it on the host, `<user>@<host>` (the account
 * is root, the only one the command line acts as, but the person is whoever is logged in there).
 */
export const cliIdentity = (): ActingIdentity => {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A user id without a name (a container's): the id says who as well.
    user = String(process.getuid?.() ?? 'unknown');
  }
  return { kind: 'CLI', value: `${user}@${hostname()}` };
};
