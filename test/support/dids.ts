import { createFileDids } from '../../commands/did/fileRegistration.ts';
import type { FileRegistration } from '../../domain/did/didCreation.ts';
import { uniqueName } from './events.ts';
import { expectStatus, type TestServer } from './server.ts';

/** A new scope owned by `owner` (root by default), unique to the test. */
export const newScope = async (server: TestServer, owner = 'root'): Promise<string> => {
  const scope = uniqueName('s.');
  expectStatus(await server.root('POST', `/scopes/${owner}/${scope}`), 201);
  return scope;
};

/**
 * Registers files the way replica registration will: through the commands layer, since the
 * replica routes belong to a later issue. Waits until the read models show them.
 */
export const registerFiles = async (server: TestServer, files: FileRegistration[], account = 'root'): Promise<void> => {
  const { commands, progress } = server.runtime.services;
  const outcome = await createFileDids(commands, files, { now: new Date(), account, requestId: uniqueName('test-') });
  if (outcome.position !== undefined) await progress.waitFor(outcome.position, 5000);
};

export const aFile = (scope: string, name: string, extra: Partial<FileRegistration> = {}): FileRegistration => ({
  scope,
  name,
  bytes: 100,
  adler32: '0cc737eb',
  ...extra,
});

export const path = (scope: string, name: string, suffix = ''): string =>
  `/dids/${encodeURIComponent(scope)}/${encodeURIComponent(name)}${suffix}`;
