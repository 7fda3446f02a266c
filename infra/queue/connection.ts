import type { ConnectionOptions } from 'bullmq';

/**
 * Connection options for BullMQ queues and workers; BullMQ opens and closes the connections
 * itself. Workers block on Redis, so commands must never give up after a few retries (BullMQ
 * requires `maxRetriesPerRequest: null`).
 */
export const redisConnectionOptions = (url: string): ConnectionOptions => ({ url, maxRetriesPerRequest: null });
