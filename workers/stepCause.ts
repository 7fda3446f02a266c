import { createHash } from 'node:crypto';

/**
 * A short digest of what a step is about (the replicas of a chunk, sorted): part of the step's
 * cause, so a job run again over other content derives other event ids, and over the same
 * content the same ones (appended once).
 */
export const contentDigest = (keys: readonly string[]): string =>
  createHash('sha1')
    .update([...keys].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
