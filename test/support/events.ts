import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../infra/eventstore/eventStore.ts';

/** A unique name for a stream, queue or resource so tests never see each other's data. */
export const uniqueName = (prefix: string): string => `${prefix}${randomUUID().replaceAll('-', '').slice(0, 12)}`;

export const newEvent = (type: string, data: object = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { account: 'root', requestId: randomUUID(), at: new Date().toISOString(), schemaVersion: 1 },
});
