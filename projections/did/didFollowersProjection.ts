import { didKey, type DidEvent, type DidType } from '../../domain/did/did.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';

/** Who follows which DID: one document per (DID, account). */
export type FollowerDocument = Projected<{
  didKey: string;
  scope: string;
  name: string;
  did_type: DidType;
  account: string;
  created_at: string;
}>;

export const didFollowersCollection: CollectionSpec = {
  name: 'did_followers',
  indexes: [{ fields: ['didKey', '_id'] }],
};

const followerId = (key: string, account: string): string => `${key} ${account}`;

export const didFollowersProjection: Projection<EventsOf<DidEvent, 'DidFollowed' | 'DidUnfollowed' | 'DidErased'>> = {
  name: 'did_followers',
  version: 1,
  collections: [didFollowersCollection],
  handles: { DidFollowed: true, DidUnfollowed: true, DidErased: true },
  async apply(event, context) {
    const followers = context.collection<FollowerDocument>(didFollowersCollection);
    switch (event.type) {
      case 'DidFollowed': {
        const { scope, name, didType, account, followedAt } = event.data;
        const key = didKey(scope, name);
        await followers.update(followerId(key, account), () => ({
          _id: followerId(key, account),
          didKey: key,
          scope,
          name,
          did_type: didType,
          account,
          created_at: followedAt,
        }));
        return;
      }
      case 'DidUnfollowed':
        await followers.update(followerId(didKey(event.data.scope, event.data.name), event.data.account), () => null);
        return;
      case 'DidErased': {
        // Rare (the undertaker deleting a collection), so one query for its followers is fine.
        const key = didKey(event.data.scope, event.data.name);
        for (const follower of await followers.find({ didKey: key })) await followers.update(follower._id, () => null);
        return;
      }
      default:
        return;
    }
  },
};
