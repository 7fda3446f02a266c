import { randomUUID } from 'node:crypto';
import { eventUpcasters } from '../../domain/areas.ts';
import type { NewEvent } from '../../infra/eventstore/eventStore.ts';

/** A unique name for a stream, queue or resource so tests never see each other's data. */
export const uniqueName = (prefix: string): string => `${prefix}${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/**
 * An event to append, in the shape of `schemaVersion`: by default its type's current version (as
 * today's code writes it); a test of stored history gives the older version its data is in.
 */
export const newEvent = (
  type: string,
  data: object = {},
  schemaVersion = eventUpcasters.currentVersion(type),
): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { account: 'root', requestId: randomUUID(), at: new Date().toISOString(), schemaVersion },
});
