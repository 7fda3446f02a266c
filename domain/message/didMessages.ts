import type { DidEvent, DidType } from '../did/did.ts';
import type { MessageEnvelope, MessagePayload } from './message.ts';
import { pythonDate } from './pythonText.ts';

type DidMessageEvent = Extract<
  DidEvent,
  { type: 'DidCreated' | 'DidsAttached' | 'DidsDetached' | 'DidClosed' | 'DidReopened' | 'DidErased' }
>;

/** AMI's names of a child's type in REGISTER_CNT and ERASE_CNT (Rucio: anything else is UNKNOWN). */
const amiType = (type: DidType): string => (type === 'FILE' ? 'UNKNOWN' : type);

/** How Rucio writes a DIDType member with `str()` (DETACH's payload). */
const enumText = (type: DidType): string => `DIDType.${type}`;

/**
 * The DID messages of rucio/core/did.py: CREATE_DTS and CREATE_CNT when a collection is added,
 * REGISTER_CNT per collection attached to a container, ERASE_CNT (containers) and DETACH per
 * child detached, CLOSE and OPEN, and ERASE when a collection is deleted: by the undertaker
 * (its account), or by the reaper's cleanup of an emptied dataset (as root; Rucio sends none for
 * the containers and files the cleanup removes).
 */
export const didMessages = (event: DidMessageEvent, envelope: MessageEnvelope): MessagePayload[] => {
  switch (event.type) {
    case 'DidCreated': {
      const { didType, scope, name, expiredAt } = event.data;
      if (didType === 'FILE') return [];
      return [
        {
          eventType: didType === 'DATASET' ? 'CREATE_DTS' : 'CREATE_CNT',
          payload: { account: envelope.account, scope, name, expired_at: pythonDate(expiredAt) },
        },
      ];
    }
    case 'DidsAttached': {
      const { didType, scope, name, children } = event.data;
      if (didType !== 'CONTAINER') return [];
      return children.map((child) => ({
        eventType: 'REGISTER_CNT',
        payload: {
          account: envelope.account,
          scope,
          name,
          childscope: child.scope,
          childname: child.name,
          childtype: amiType(child.didType),
        },
      }));
    }
    case 'DidsDetached': {
      const { didType, scope, name, children } = event.data;
      return children.flatMap((child): MessagePayload[] => [
        ...(didType === 'CONTAINER'
          ? [
              {
                eventType: 'ERASE_CNT',
                payload: {
                  scope,
                  name,
                  childscope: child.scope,
                  childname: child.name,
                  childtype: amiType(child.didType),
                },
              },
            ]
          : []),
        {
          eventType: 'DETACH',
          payload: {
            scope,
            name,
            did_type: enumText(didType),
            child_scope: child.scope,
            child_name: child.name,
            child_type: enumText(child.didType),
          },
        },
      ]);
    }
    case 'DidClosed': {
      const { scope, name, totals } = event.data;
      return [
        {
          eventType: 'CLOSE',
          payload: { scope, name, bytes: totals.bytes, length: totals.length, events: totals.events },
        },
      ];
    }
    case 'DidReopened':
      return [{ eventType: 'OPEN', payload: { scope: event.data.scope, name: event.data.name } }];
    case 'DidErased': {
      const { didType, scope, name, reason } = event.data;
      // The undertaker's erasures carry no reason; the reaper's cleanup names its own.
      const byUndertaker = reason === undefined;
      if (didType === 'FILE' || (!byUndertaker && didType !== 'DATASET')) return [];
      return [{ eventType: 'ERASE', payload: { account: byUndertaker ? envelope.account : 'root', scope, name } }];
    }
  }
};
