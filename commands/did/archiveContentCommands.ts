import type { AddArchiveContent, MarkConstituent, MarkDatasetArchive } from '../../domain/did/archiveContent.ts';
import type { FileRegistration } from '../../domain/did/didCreation.ts';
import { childFactsOf, type AttachRequest, type ChildFacts } from '../../domain/did/didContent.ts';
import { didKey, type DidRef } from '../../domain/did/did.ts';
import type { DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { InvalidObject } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import type { CommandContext, DecidedStates } from '../handleCommand.ts';
import { decidedDid, loadAttachCandidates, onDidStream, type DidDecision } from './didStreams.ts';
import { prepareFileRegistration } from './fileRegistration.ts';

/** Files to put into one archive file (its name says it is one: `isArchiveName`). */
export type ArchiveAttachment = Readonly<{ archive: DidRef; children: readonly AttachRequest[] }>;

type StreamCommands = (decided: DecidedStates) => readonly DidStreamCommand[];

/**
 * The decisions that put files into archives, for one atomic step (Rucio's
 * `__add_files_to_archive`): each constituent's stream first (a missing file is created there,
 * from the size and checksums the request gives, owned by the caller; every constituent is
 * marked), then each archive's stream, which takes the constituents as they are after that, then
 * the datasets already holding an archive that becomes one now. A stream named several times is
 * decided once, its commands in order.
 */
export const archiveDecisions = async (
  context: CommandContext,
  attachments: readonly ArchiveAttachment[],
  ignoreDuplicates: boolean,
  metadata: CommandMetadata,
): Promise<DidDecision[]> => {
  const requests = attachments.flatMap((attachment) => attachment.children);
  const known = new Map<string, ChildFacts | undefined>(
    (await loadAttachCandidates(context, requests)).map(({ request, facts }) => [
      didKey(request.scope, request.name),
      facts,
    ]),
  );
  const missing = new Map<string, FileRegistration>();
  for (const request of requests) {
    const key = didKey(request.scope, request.name);
    if (known.get(key) || missing.has(key)) continue;
    missing.set(key, newConstituent(request, metadata.account));
  }
  const register = await prepareFileRegistration(context, [...missing.values()], metadata);

  const streams = new Map<string, { did: DidRef; commands: StreamCommands[] }>();
  const add = (did: DidRef, commands: StreamCommands): void => {
    const key = didKey(did.scope, did.name);
    const entry = streams.get(key) ?? { did, commands: [] };
    entry.commands.push(commands);
    streams.set(key, entry);
  };
  for (const { archive, children } of attachments) {
    for (const request of children) {
      const registration = missing.get(didKey(request.scope, request.name));
      const mark: MarkConstituent = {
        type: 'MarkConstituent',
        data: { scope: request.scope, name: request.name, archive },
        metadata,
      };
      add(request, () => (registration ? [register(registration), mark] : [mark]));
    }
  }
  for (const { archive, children } of attachments) {
    add(archive, (decided) => {
      const command: AddArchiveContent = {
        type: 'AddArchiveContent',
        data: {
          scope: archive.scope,
          name: archive.name,
          children: children.map((request) => {
            const state = decidedDid(decided, request.scope, request.name);
            return { request, facts: state ? childFactsOf(state) : known.get(didKey(request.scope, request.name)) };
          }),
          ignoreDuplicates,
        },
        metadata,
      };
      return [command];
    });
  }
  // Rucio marks the datasets holding a file when it becomes an archive; once it is one, a
  // dataset it enters is marked by the attach itself.
  for (const { archive } of attachments) {
    if (known.get(didKey(archive.scope, archive.name))?.isArchive) continue;
    for (const parent of await context.didGraph.parents(archive.scope, archive.name)) {
      const mark: MarkDatasetArchive = {
        type: 'MarkDatasetArchive',
        data: { scope: parent.scope, name: parent.name, archive },
        metadata,
      };
      add(parent, () => [mark]);
    }
  }
  return [...streams.values()].map(({ did, commands }) =>
    onDidStream(did.scope, did.name, (decided) => commands.flatMap((each) => each(decided))),
  );
};

/** A constituent the catalogue does not know yet: it is created from what the request says of it. */
const newConstituent = (request: AttachRequest, account: string): FileRegistration => {
  const { bytes, adler32, md5 } = request;
  if (typeof bytes !== 'number')
    throw new InvalidObject(
      `Problem validating attachment: 'bytes' is a required property of the new constituent ${request.scope}:${request.name}`,
    );
  return {
    scope: request.scope,
    name: request.name,
    bytes,
    adler32: typeof adler32 === 'string' ? adler32 : null,
    md5: typeof md5 === 'string' ? md5 : null,
    account,
  };
};
