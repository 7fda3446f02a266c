import { didKey, type DidEvent } from '../../domain/did/did.ts';
import type { ReplicaEvent } from '../../domain/replica/replica.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';

/** Rucio's BadFilesStatus names; the letters are what some queries use. */
export type BadReplicaState = 'BAD' | 'DELETED' | 'LOST' | 'RECOVERED' | 'SUSPICIOUS' | 'TEMPORARY_UNAVAILABLE';

export const BAD_STATE_LETTERS: Readonly<Record<string, BadReplicaState>> = {
  B: 'BAD',
  D: 'DELETED',
  L: 'LOST',
  R: 'RECOVERED',
  S: 'SUSPICIOUS',
  T: 'TEMPORARY_UNAVAILABLE',
};

/**
 * The history of declarations (Rucio's `bad_replicas` table): one row per BAD declaration (it
 * becomes RECOVERED when the replica is AVAILABLE again), one per suspicious declaration (their
 * count matters), and one per replica for a temporary unavailability (declaring again moves it).
 */
export type BadReplicaDocument = Projected<{
  didKey: string;
  scope: string;
  name: string;
  rse: string;
  rse_id: string;
  state: BadReplicaState;
  reason: string | null;
  account: string;
  bytes: number | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}>;

export const badReplicasCollection: CollectionSpec = {
  name: 'bad_replicas',
  indexes: [
    { fields: ['created_at'] },
    { fields: ['state', 'created_at'] },
    { fields: ['rse_id', 'created_at'] },
    { fields: ['didKey', 'rse_id', 'state'] },
  ],
};

/** Rows of one replica start with the file and RSE; the event's position keeps repeated rows apart. */
const rowId = (event: ReplicaEvent, letter: string, position?: number): string =>
  `${didKey(event.data.scope, event.data.name)} ${event.data.rseId} ${letter}${position === undefined ? '' : ` ${String(position).padStart(20, '0')}`}`;

type BadReplicaEvent =
  | EventsOf<
      ReplicaEvent,
      | 'ReplicaDeclaredBad'
      | 'ReplicaDeclaredSuspicious'
      | 'ReplicaDeclaredTemporarilyUnavailable'
      | 'ReplicaStateChanged'
      | 'ReplicaDeleted'
      | 'ReplicaLost'
    >
  | EventsOf<DidEvent, 'FileExpiryCleared' | 'DidErased'>;

/**
 * Version 2: BAD rows end DELETED when their replica is deleted or their file expired (the
 * undertaker), LOST when the necromancer loses the replica; a temporary unavailability's row
 * goes once the replica leaves that state (its expiry, a BAD declaration, a state update).
 */
export const badReplicasProjection: Projection<BadReplicaEvent> = {
  name: 'bad_replicas',
  version: 2,
  collections: [badReplicasCollection],
  handles: {
    ReplicaDeclaredBad: true,
    ReplicaDeclaredSuspicious: true,
    ReplicaDeclaredTemporarilyUnavailable: true,
    ReplicaStateChanged: true,
    ReplicaDeleted: true,
    ReplicaLost: true,
    FileExpiryCleared: true,
    DidErased: true,
  },
  async apply(event, context) {
    const rows = context.collection<BadReplicaDocument>(badReplicasCollection);
    /** Open BAD rows (of one RSE, or of every RSE) take a final state. */
    const closeBadRows = async (key: string, rseId: string | undefined, state: BadReplicaState, at: string) => {
      for (const open of await rows.find({ didKey: key, ...(rseId ? { rse_id: rseId } : {}), state: 'BAD' })) {
        await rows.update(open._id, (current) => (current ? { ...current, state, updated_at: at } : undefined));
      }
    };
    const dropTemporaryRow = (key: string, rseId: string) =>
      rows.update(`${key} ${rseId} T`, (current) => (current ? null : undefined));
    if (event.type === 'FileExpiryCleared') {
      await closeBadRows(didKey(event.data.scope, event.data.name), undefined, 'DELETED', event.data.clearedAt);
      return;
    }
    if (event.type === 'DidErased') {
      // The undertaker's BAD rows of the files concerned (Rucio's delete_dids): a file, or a dataset's files.
      if (event.data.didType === 'FILE')
        await closeBadRows(didKey(event.data.scope, event.data.name), undefined, 'DELETED', event.data.erasedAt);
      if (event.data.didType === 'DATASET')
        for (const child of event.data.children)
          await closeBadRows(didKey(child.scope, child.name), undefined, 'DELETED', event.data.erasedAt);
      return;
    }
    const { scope, name, rse, rseId } = event.data;
    const row = (
      state: BadReplicaState,
      fields: { reason: string | null; account: string; bytes: number; expires_at: string | null; at: string },
    ) => ({
      didKey: didKey(scope, name),
      scope,
      name,
      rse,
      rse_id: rseId,
      state,
      reason: fields.reason,
      account: fields.account,
      bytes: fields.bytes,
      expires_at: fields.expires_at,
      created_at: fields.at,
      updated_at: fields.at,
    });
    switch (event.type) {
      case 'ReplicaDeclaredBad': {
        if (event.data.previousState === 'TEMPORARY_UNAVAILABLE') await dropTemporaryRow(didKey(scope, name), rseId);
        const id = rowId(event, 'B', context.position);
        await rows.create(id, {
          _id: id,
          ...row('BAD', { ...event.data, expires_at: null, at: event.data.declaredAt }),
        });
        return;
      }
      case 'ReplicaDeclaredSuspicious': {
        const id = rowId(event, 'S', context.position);
        await rows.create(id, {
          _id: id,
          ...row('SUSPICIOUS', { ...event.data, expires_at: null, at: event.data.declaredAt }),
        });
        return;
      }
      case 'ReplicaDeclaredTemporarilyUnavailable': {
        const id = rowId(event, 'T');
        const at = event.data.declaredAt;
        await rows.update(id, (current) => ({
          _id: id,
          ...row('TEMPORARY_UNAVAILABLE', {
            ...event.data,
            bytes: event.data.bytes,
            expires_at: event.data.expiresAt,
            at,
          }),
          created_at: current?.created_at ?? at,
        }));
        return;
      }
      case 'ReplicaStateChanged': {
        if (event.data.previousState === 'TEMPORARY_UNAVAILABLE' && event.data.state !== 'TEMPORARY_UNAVAILABLE')
          await dropTemporaryRow(didKey(scope, name), rseId);
        // Recoveries are rare: looking the open BAD rows up costs one query then.
        if (event.data.recovered) await closeBadRows(didKey(scope, name), rseId, 'RECOVERED', event.data.changedAt);
        return;
      }
      case 'ReplicaDeleted':
        // Only a replica declared BAD has rows to close (a TEMPORARY_UNAVAILABLE one is never deleted): no query for the others.
        if (event.data.declaredBad) await closeBadRows(didKey(scope, name), rseId, 'DELETED', event.data.deletedAt);
        return;
      case 'ReplicaLost':
        await closeBadRows(didKey(scope, name), rseId, 'LOST', event.data.lostAt);
        return;
      default:
        return;
    }
  },
};
