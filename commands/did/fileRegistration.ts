import type { FileRegistration, RegisterFile } from '../../domain/did/didCreation.ts';
import { didKey } from '../../domain/did/did.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount } from '../caller.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { loadConventions, onDidStream, requireScope, type DidDecision } from './didStreams.ts';
import { loadNameSchema } from '../config/configCommands.ts';

/** Creating file DIDs, which only replica registration does (Rucio's `add_replicas`). */

export const ensureAccountExists = async (context: CommandContext, account: string): Promise<void> => {
  const state = await loadAccount(context, account);
  if (state.status === 'Absent' || state.status === 'DELETED')
    throw new AccountNotFound(`Account ID '${account}' does not exist`);
};

/**
 * Everything replica registration needs to create file DIDs inside its own decision on the file
 * streams: checks that every scope and owner exists, loads the metadata conventions, and returns
 * the command that registers one file (an existing file is reused as it is, as Rucio's
 * add_replicas does). Permissions are the caller's business: registering replicas has its own.
 */
export const prepareFileRegistration = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<(file: FileRegistration) => RegisterFile> => {
  for (const scope of new Set(files.map((file) => file.scope))) await requireScope(context, scope);
  for (const account of new Set(files.flatMap((file) => (file.account ? [file.account] : []))))
    await ensureAccountExists(context, account);
  const conventions = await loadConventions(
    context,
    files.flatMap((file) => Object.keys(file.meta ?? {})),
  );
  const nameSchema = await loadNameSchema(context);
  return (file) => ({ type: 'RegisterFile', data: { file, conventions, nameSchema }, metadata });
};

/** One decision per distinct file (the first description of a file wins), for `handleCommands`. */
export const fileRegistrationDecisions = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<DidDecision[]> => {
  const registration = await prepareFileRegistration(context, files, metadata);
  const distinct = new Map<string, FileRegistration>();
  for (const file of files) {
    const key = didKey(file.scope, file.name);
    if (!distinct.has(key)) distinct.set(key, file);
  }
  return [...distinct.values()].map((file) => onDidStream(file.scope, file.name, registration(file)));
};

/** Creates the missing file DIDs of `files` in one atomic step; existing files are left alone. */
export const createFileDids = async (
  context: CommandContext,
  files: readonly FileRegistration[],
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined }> => {
  const decisions = await fileRegistrationDecisions(context, files, metadata);
  return { position: lastPosition(await handleCommands(context, decisions, { metadata })) };
};
