import type { ChildFacts } from '../../domain/did/didContent.ts';
import type { ContentEntry, DidEvent, DidType } from '../../domain/did/did.ts';
import { AT } from './deciderSpec.ts';

/** Event and fact builders for DID decider tests: whole facts, with defaults a test may override. */

export const created = (
  name: string,
  didType: DidType,
  extra: Partial<Extract<DidEvent, { type: 'DidCreated' }>['data']> = {},
): DidEvent => ({
  type: 'DidCreated',
  data: {
    scope: 'user.jdoe',
    name,
    didType,
    account: 'jdoe',
    createdAt: AT,
    expiredAt: null,
    monotonic: false,
    isNew: didType === 'FILE' ? null : true,
    bytes: didType === 'FILE' ? 100 : null,
    adler32: didType === 'FILE' ? '0cc737eb' : null,
    md5: null,
    guid: null,
    events: didType === 'FILE' ? 10 : null,
    replicas: [],
    ...extra,
  },
});

export const fileEntry = (name: string, extra: Partial<ContentEntry> = {}): ContentEntry => ({
  scope: 'user.jdoe',
  name,
  didType: 'FILE',
  bytes: 100,
  adler32: '0cc737eb',
  md5: null,
  guid: null,
  events: 10,
  ...extra,
});

export const collectionEntry = (name: string, didType: 'DATASET' | 'CONTAINER'): ContentEntry => ({
  scope: 'user.jdoe',
  name,
  didType,
  bytes: null,
  adler32: null,
  md5: null,
  guid: null,
  events: null,
});

export const fileFacts = (extra: Partial<ChildFacts> = {}): ChildFacts => ({
  didType: 'FILE',
  availability: 'AVAILABLE',
  bytes: 100,
  adler32: '0cc737eb',
  md5: null,
  guid: null,
  events: 10,
  ...extra,
});

export const collectionFacts = (didType: 'DATASET' | 'CONTAINER'): ChildFacts => ({
  didType,
  availability: 'AVAILABLE',
  bytes: null,
  adler32: null,
  md5: null,
  guid: null,
  events: null,
});
