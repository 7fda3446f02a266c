import { didStreamName } from '../../domain/did/did.ts';
import { created } from './didEvents.ts';
import type { StreamedEvent } from './projectionHarness.ts';
import { SPEC_NOW } from './commandSpec.ts';

/**
 * Events on their streams, for the `given` of command-layer specifications: the history a command
 * meets. Whole facts with defaults; names are the test's own.
 */
const at = SPEC_NOW.toISOString();

export const accountCreated = (account: string, accountType: 'USER' | 'GROUP' | 'SERVICE' = 'USER'): StreamedEvent => ({
  stream: `account-${account}`,
  type: 'AccountCreated',
  data: { account, accountType, email: `${account}@example.org`, createdAt: at },
});

export const adminAttributeAdded = (account: string): StreamedEvent => ({
  stream: `account-${account}`,
  type: 'AccountAttributeAdded',
  data: { account, key: 'admin', value: 'True' },
});

export const scopeAdded = (scope: string, account: string): StreamedEvent => ({
  stream: `scope-${scope}`,
  type: 'ScopeAdded',
  data: { scope, account, addedAt: at },
});

export const collectionCreated = (
  scope: string,
  name: string,
  didType: 'DATASET' | 'CONTAINER',
  account: string,
): StreamedEvent => ({
  stream: didStreamName(scope, name),
  ...created(name, didType, { scope, account, createdAt: at }),
});

export const fileCreated = (scope: string, name: string, account: string, bytes = 100): StreamedEvent => ({
  stream: didStreamName(scope, name),
  ...created(name, 'FILE', { scope, account, createdAt: at, bytes, events: null }),
});
