import type { MetaConvention } from '../metaConvention/metaConvention.ts';
import { DatabaseException, DataIdentifierAlreadyExists, UnsupportedOperation } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { assertDidAllowed, type NameSchema } from '../shared/names.ts';
import { attachDids, type AttachCandidate } from './didContent.ts';
import { evolveDid, type CollectionType, type Did, type DidEvent } from './did.ts';
import { metadataSetEvent, normalizeGuid, planMetadataChange } from './didMetadata.ts';

/**
 * Creating DIDs. Collections are created by users (`add_did`, `add_dids`), open, with optional
 * metadata and content. Files come into being only through replica registration, which reuses a
 * file that already exists without comparing it (Rucio's `add_replicas`).
 */

export type CreateCollection = Command<
  'CreateCollection',
  {
    scope: string;
    name: string;
    didType: CollectionType;
    /** The owner: the `account` of the request, else the issuer. */
    account: string;
    monotonic: boolean;
    /** Seconds until the DID expires; null or 0 for never. */
    lifetime: number | null;
    meta: Readonly<Record<string, unknown>>;
    conventions: ReadonlyMap<string, MetaConvention>;
    /** Content to attach at once, with the children's facts. */
    children: readonly AttachCandidate[];
    /** The configured policy schema (`policy.schema`), which the scope and name must follow. */
    nameSchema: NameSchema;
  }
>;

/** A file as replica registration describes it. */
export type FileRegistration = Readonly<{
  scope: string;
  name: string;
  bytes: number;
  adler32?: string | null;
  md5?: string | null;
  guid?: string | null;
  events?: number | null;
  /** Metadata set when the file is created (ignored for an existing file, as in Rucio). */
  meta?: Readonly<Record<string, unknown>>;
  /** The owner; default the issuer. */
  account?: string;
}>;

export type RegisterFile = Command<
  'RegisterFile',
  {
    file: FileRegistration;
    conventions: ReadonlyMap<string, MetaConvention>;
    /** The configured policy schema (`policy.schema`), which the scope and name must follow. */
    nameSchema: NameSchema;
  }
>;

const refuseExisting = (state: Did, scope: string, name: string): void => {
  if (state.status === 'Live') throw new DataIdentifierAlreadyExists('Data Identifier already exists!');
  if (state.status === 'Erased') throw new DatabaseException(`A deleted DID ${name} with scope ${scope} is reused`);
};

export const createCollection = (command: CreateCollection, state: Did): DidEvent[] => {
  const { data, metadata } = command;
  assertDidAllowed(data.nameSchema, data.scope, data.name);
  refuseExisting(state, data.scope, data.name);
  const now = metadata.now;
  const events: DidEvent[] = [
    {
      type: 'DidCreated',
      data: {
        scope: data.scope,
        name: data.name,
        didType: data.didType,
        account: data.account,
        createdAt: now.toISOString(),
        expiredAt: data.lifetime ? new Date(now.getTime() + data.lifetime * 1000).toISOString() : null,
        monotonic: data.monotonic,
        isNew: true,
        bytes: null,
        adler32: null,
        md5: null,
        guid: null,
        events: null,
        replicas: [],
      },
    },
  ];
  if (Object.keys(data.meta).length > 0) {
    const change = planMetadataChange(data, data.meta, now, data.conventions);
    events.push(metadataSetEvent(data, change, now));
  }
  if (data.children.length > 0) {
    // A new DID has no ancestors, so its content cannot close a cycle.
    const created = events.reduce(evolveDid, state);
    events.push(
      ...attachDids(
        {
          type: 'AttachDids',
          data: {
            scope: data.scope,
            name: data.name,
            children: data.children,
            ignoreDuplicates: false,
            ancestors: new Set(),
          },
          metadata,
        },
        created,
      ),
    );
  }
  return events;
};

/** Creates a missing file; an existing file is reused as it is. */
export const registerFile = ({ data, metadata }: RegisterFile, state: Did): DidEvent[] => {
  const { file } = data;
  // Checked for an existing file too, as Rucio validates every name `add_replicas` is given.
  assertDidAllowed(data.nameSchema, file.scope, file.name);
  if (state.status === 'Live') {
    if (state.record.didType === 'FILE') return [];
    throw new UnsupportedOperation(
      `Data identifier '${file.scope}:${file.name}' is a ${state.record.didType}, not a file`,
    );
  }
  // A file the reaper deleted with its last replica may be registered again (Rucio keeps no
  // record of it by default); a deleted collection's name stays taken.
  if (state.status !== 'Erased' || state.record.didType !== 'FILE') refuseExisting(state, file.scope, file.name);
  const now = metadata.now;
  const events: DidEvent[] = [
    {
      type: 'DidCreated',
      data: {
        scope: file.scope,
        name: file.name,
        didType: 'FILE',
        account: file.account ?? metadata.account,
        createdAt: now.toISOString(),
        expiredAt: null,
        monotonic: false,
        isNew: null,
        bytes: file.bytes,
        adler32: file.adler32 ?? null,
        md5: file.md5 ?? null,
        guid: file.guid ? (normalizeGuid(file.guid) ?? file.guid) : null,
        events: file.events ?? null,
        replicas: [],
      },
    },
  ];
  if (file.meta && Object.keys(file.meta).length > 0) {
    const change = planMetadataChange(
      { scope: file.scope, name: file.name, didType: 'FILE' },
      file.meta,
      now,
      data.conventions,
    );
    events.push(metadataSetEvent(file, change, now));
  }
  return events;
};
