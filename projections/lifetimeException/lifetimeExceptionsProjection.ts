import { didKey, type DidType } from '../../domain/did/did.ts';
import type {
  LifetimeExceptionEvent,
  LifetimeExceptionState,
} from '../../domain/lifetimeException/lifetimeException.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/**
 * Lifetime exceptions as Rucio's `lifetime_except` table holds them: one document per exception
 * and DID, with the exception's state, who decided it and when. Indexed for the listing (by id),
 * for atropos (approved exceptions of a DID) and for the duplicate check (a requester's
 * exceptions of a DID).
 */
export type LifetimeExceptionDocument = Projected<{
  id: string;
  scope: string;
  name: string;
  did_key: string;
  did_type: DidType;
  account: string;
  pattern: string | null;
  comments: string | null;
  state: LifetimeExceptionState;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  decided_by: string | null;
  decided_at: string | null;
}>;

export const lifetimeExceptionsCollection: CollectionSpec = {
  name: 'lifetime_exceptions',
  indexes: [{ fields: ['id'] }, { fields: ['did_key', 'state'] }, { fields: ['account', 'did_key'] }],
};

export const lifetimeExceptionsProjection: Projection<LifetimeExceptionEvent> = {
  name: 'lifetime_exceptions',
  version: 1,
  collections: [lifetimeExceptionsCollection],
  handles: { ExceptionRequested: true, ExceptionApproved: true, ExceptionRejected: true },
  async apply(event, context) {
    const documents = context.collection<LifetimeExceptionDocument>(lifetimeExceptionsCollection);
    if (event.type === 'ExceptionRequested') {
      const { exception } = event.data;
      for (const did of exception.dids) {
        const key = didKey(did.scope, did.name);
        const id = `${exception.id} ${key}`;
        await documents.create(id, {
          _id: id,
          id: exception.id,
          scope: did.scope,
          name: did.name,
          did_key: key,
          did_type: did.didType,
          account: exception.account,
          pattern: exception.pattern,
          comments: exception.comments,
          state: 'WAITING',
          created_at: exception.createdAt,
          updated_at: exception.createdAt,
          expires_at: exception.expiresAt,
          decided_by: null,
          decided_at: null,
        });
      }
      return;
    }
    const state: LifetimeExceptionState = event.type === 'ExceptionApproved' ? 'APPROVED' : 'REJECTED';
    for (const document of await documents.find({ id: event.data.id })) {
      await documents.update(document._id, (current) =>
        current
          ? { ...current, state, decided_by: event.data.approver, decided_at: event.data.at, updated_at: event.data.at }
          : undefined,
      );
    }
  },
};
