import type { MetaConvention } from '../metaConvention/metaConvention.ts';
import { DataIdentifierNotFound, KeyNotFound, NotImplementedError_ } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { totalsWithReplacedEntry } from './didContent.ts';
import { didKey, type ColumnValue, type ContentEntry, type Did, type DidEvent, type DidRef } from './did.ts';
import { managedByDidColumn, metadataSetEvent, planMetadataChange } from './didMetadata.ts';

/**
 * Writing and deleting metadata. A write is one event holding the DID_COLUMN values and the JSON
 * values; `recursive` copies the plain column values to the direct children, and a file's new
 * `guid` or `events` reach the copies its datasets keep.
 */

export type SetDidMetadata = Command<
  'SetDidMetadata',
  {
    scope: string;
    name: string;
    meta: Readonly<Record<string, unknown>>;
    conventions: ReadonlyMap<string, MetaConvention>;
  }
>;
/** The column values a parent's `recursive` write copies to this child. */
export type CopyDidColumns = Command<
  'CopyDidColumns',
  { scope: string; name: string; columns: Readonly<Record<string, ColumnValue>> }
>;
/** A child file's new `guid`/`events`, for one of its parents. */
export type UpdateContentEntry = Command<
  'UpdateContentEntry',
  { scope: string; name: string; child: DidRef; guid?: string | null; events?: number | null }
>;
export type DeleteDidMetadataKey = Command<'DeleteDidMetadataKey', { scope: string; name: string; key: string }>;

const notFound = (scope: string, name: string) =>
  new DataIdentifierNotFound(`Data identifier '${scope}:${name}' not found`);

export const setDidMetadata = ({ data, metadata }: SetDidMetadata, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  const change = planMetadataChange(state.record, data.meta, metadata.now, data.conventions);
  if (Object.keys(change.columns).length === 0 && Object.keys(change.json).length === 0) return [];
  return [metadataSetEvent(data, change, metadata.now)];
};

/** Rucio's recursive update touches whatever children exist; a vanished one is skipped. */
export const copyDidColumns = ({ data, metadata }: CopyDidColumns, state: Did): DidEvent[] => {
  if (state.status !== 'Live' || Object.keys(data.columns).length === 0) return [];
  return [
    {
      type: 'DidMetadataSet',
      data: { scope: data.scope, name: data.name, columns: data.columns, json: {}, setAt: metadata.now.toISOString() },
    },
  ];
};

export const updateContentEntry = ({ data, metadata }: UpdateContentEntry, state: Did): DidEvent[] => {
  if (state.status !== 'Live') return [];
  const previous = state.content.children.get(didKey(data.child.scope, data.child.name));
  if (!previous) return [];
  const next: ContentEntry = {
    ...previous,
    ...(data.guid !== undefined ? { guid: data.guid } : {}),
    ...(data.events !== undefined ? { events: data.events } : {}),
  };
  if (next.guid === previous.guid && next.events === previous.events) return [];
  return [
    {
      type: 'DidContentUpdated',
      data: {
        scope: data.scope,
        name: data.name,
        child: next,
        totals: totalsWithReplacedEntry(state, previous, next),
        updatedAt: metadata.now.toISOString(),
      },
    },
  ];
};

/**
 * Only JSON keys can be deleted. Rucio answers a DID without any JSON metadata (or no DID at all)
 * with DataIdentifierNotFound, and a missing key with KeyNotFound naming the key.
 */
export const deleteDidMetadataKey = ({ data, metadata }: DeleteDidMetadataKey, state: Did): DidEvent[] => {
  if (managedByDidColumn(data.key))
    throw new NotImplementedError_('The DidColumnMeta plugin does not currently support deleting metadata.');
  if (state.status !== 'Live' || state.jsonMeta === null) {
    throw new DataIdentifierNotFound(`Key not found for data identifier '${data.scope}:${data.name}'`);
  }
  if (!(data.key in state.jsonMeta)) throw new KeyNotFound(data.key);
  return [
    {
      type: 'DidMetadataKeyDeleted',
      data: { scope: data.scope, name: data.name, key: data.key, deletedAt: metadata.now.toISOString() },
    },
  ];
};
