import { DataIdentifierNotFound, Duplicate, UnsupportedOperation } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { detachDids } from './didContent.ts';
import {
  didKey,
  evolveDid,
  type ContentTotals,
  type Did,
  type DidAvailability,
  type DidEvent,
  type DidRef,
} from './did.ts';

/**
 * A DID's life after creation: closing and reopening collections, followers, expiry and the
 * undertaker's deletion, resurrection, and a file's availability.
 */

export type SetDidStatus = Command<
  'SetDidStatus',
  {
    scope: string;
    name: string;
    open: boolean;
    /** For closing a container: the totals of the files of all datasets below it. */
    descendantTotals: ContentTotals;
  }
>;
export type FollowDid = Command<'FollowDid', { scope: string; name: string; account: string }>;
export type UnfollowDid = Command<'UnfollowDid', { scope: string; name: string; account: string }>;
export type ResurrectDid = Command<'ResurrectDid', { scope: string; name: string }>;
export type EraseExpiredDid = Command<'EraseExpiredDid', { scope: string; name: string }>;
export type SetFileAvailability = Command<
  'SetFileAvailability',
  { scope: string; name: string; availability: DidAvailability }
>;
/**
 * The reaper's cleanup, upwards (Rucio's `__cleanup_after_replica_deletion`): a collection drops
 * the children the cleanup deleted (files gone with their last replica, collections emptied
 * below it); left empty by that, it is deleted when it is closed (or any, with
 * `reaper.remove_open_did`) and no rule is on it. Children not attached (the read model the
 * cleanup learnt its parents from lags) are ignored.
 */
export type RemoveDeletedChildren = Command<
  'RemoveDeletedChildren',
  { scope: string; name: string; children: readonly DidRef[]; removeOpen: boolean; reason: string }
>;

const notFound = (scope: string, name: string) =>
  new DataIdentifierNotFound(`Data identifier '${scope}:${name}' not found`);

const ZERO_TOTALS: ContentTotals = { length: 0, bytes: 0, events: 0 };

/**
 * Closing fixes `length`, `bytes` and `events`: a dataset's from its files, a container's from the
 * files of every dataset below it. Only the opposite state can be set (Rucio's conditional update).
 */
export const setDidStatus = ({ data, metadata }: SetDidStatus, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  const record = state.record;
  if (record.didType === 'FILE' || record.isOpen === data.open) {
    throw new UnsupportedOperation(`The status of the data identifier '${data.scope}:${data.name}' cannot be changed`);
  }
  const at = metadata.now.toISOString();
  if (data.open) return [{ type: 'DidReopened', data: { scope: data.scope, name: data.name, reopenedAt: at } }];
  const totals =
    record.didType === 'DATASET'
      ? {
          length: state.content.children.size,
          bytes: state.content.totals.bytes ?? 0,
          events: state.content.totals.events ?? 0,
        }
      : { ...ZERO_TOTALS, ...withoutNulls(data.descendantTotals) };
  return [{ type: 'DidClosed', data: { scope: data.scope, name: data.name, totals, closedAt: at } }];
};

const withoutNulls = (totals: ContentTotals): Partial<ContentTotals> =>
  Object.fromEntries(Object.entries(totals).filter(([, value]) => value !== null));

export const followDid = ({ data, metadata }: FollowDid, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  if (state.followers.has(data.account)) {
    throw new Duplicate(`Account ${data.account} already follows ${didKey(data.scope, data.name)}`);
  }
  return [
    {
      type: 'DidFollowed',
      data: {
        scope: data.scope,
        name: data.name,
        didType: state.record.didType,
        account: data.account,
        followedAt: metadata.now.toISOString(),
      },
    },
  ];
};

/** Unfollowing a DID one does not follow changes nothing, as in Rucio. */
export const unfollowDid = ({ data }: UnfollowDid, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  if (!state.followers.has(data.account)) return [];
  return [{ type: 'DidUnfollowed', data: { scope: data.scope, name: data.name, account: data.account } }];
};

/**
 * Brings back a collection the undertaker deleted (its record, not its content), or clears the
 * expiry of a DID that has expired but still exists.
 */
export const resurrectDid = ({ data, metadata }: ResurrectDid, state: Did): DidEvent[] => {
  const at = metadata.now.toISOString();
  if (state.status === 'Erased') {
    const { didType, account, createdAt, monotonic, isOpen, closedAt, columns } = state.record;
    return [
      {
        type: 'DidResurrected',
        data: {
          scope: data.scope,
          name: data.name,
          restored: { didType, account, createdAt, monotonic, isOpen, closedAt, columns },
          resurrectedAt: at,
        },
      },
    ];
  }
  if (state.status === 'Live' && state.record.expiredAt !== null && state.record.expiredAt < at) {
    return [
      { type: 'DidResurrected', data: { scope: data.scope, name: data.name, restored: null, resurrectedAt: at } },
    ];
  }
  throw new DataIdentifierNotFound(`Deleted Data identifier '${data.scope}:${data.name}' not found`);
};

/**
 * The undertaker's decision for one expired DID (Rucio's `delete_dids`). A collection is deleted
 * with its content, metadata and followers; a file stays and only loses its expiry and JSON
 * metadata (it disappears with its last replica). Detaching it from its parents is decided on the
 * parents' streams in the same command.
 */
export const eraseExpiredDid = ({ data, metadata }: EraseExpiredDid, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  const at = metadata.now.toISOString();
  const { expiredAt, didType } = state.record;
  if (expiredAt === null || expiredAt >= at) {
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' has not expired`);
  }
  // The undertaker leaves a DID alone while one of its rules is locked; the others go first, in the same step.
  if ([...state.rules.values()].some((rule) => rule.locked)) {
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' has a locked replication rule`);
  }
  if (state.rules.size > 0)
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' still has replication rules`);
  if (didType === 'FILE')
    return [{ type: 'FileExpiryCleared', data: { scope: data.scope, name: data.name, clearedAt: at } }];
  const children = [...state.content.children.values()].map(({ scope, name }) => ({ scope, name }));
  return [{ type: 'DidErased', data: { scope: data.scope, name: data.name, didType, children, erasedAt: at } }];
};

export const setFileAvailability = ({ data, metadata }: SetFileAvailability, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  if (state.record.didType !== 'FILE') {
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' is not a file`);
  }
  if (state.record.availability === data.availability) return [];
  return [
    {
      type: 'FileAvailabilityChanged',
      data: {
        scope: data.scope,
        name: data.name,
        availability: data.availability,
        changedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const removeDeletedChildren = ({ data, metadata }: RemoveDeletedChildren, state: Did): DidEvent[] => {
  if (state.status !== 'Live' || state.record.didType === 'FILE') return [];
  const detached = detachDids(
    {
      type: 'DetachDids',
      data: { scope: data.scope, name: data.name, children: data.children, ifAttached: true },
      metadata,
    },
    state,
  );
  if (detached.length === 0) return [];
  const after = detached.reduce(evolveDid, state);
  const erasable =
    after.status === 'Live' &&
    after.content.children.size === 0 &&
    (after.record.isOpen === false || data.removeOpen) &&
    after.rules.size === 0;
  if (!erasable) return detached;
  return [
    ...detached,
    {
      type: 'DidErased',
      data: {
        scope: data.scope,
        name: data.name,
        didType: state.record.didType,
        children: [],
        erasedAt: metadata.now.toISOString(),
        reason: data.reason,
      },
    },
  ];
};
