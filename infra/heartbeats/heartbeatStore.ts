import { createHash } from 'node:crypto';
import type { Collection, CollectionSpec, Document, ReadStore } from '../readstore/readStore.ts';

/**
 * Heartbeats (Rucio's `heartbeats` table): which daemon runs where, last seen when. They are
 * liveness data, not history: every role of every worker process beats every half minute, each
 * beat overwrites the last, and nothing is ever decided from an old one. As events they would
 * be most of the log and of the audit feed, and a projection would replay millions of them to
 * rebuild a table of a few dozen rows. So they live, like the tokens, in the read store outside
 * the projections (every process sees them; a rebuild leaves them alone), and go when they
 * expire. Rucio keeps them in a table of its own for the same reason.
 */
export type HeartbeatInput = Readonly<{
  /** What runs: a daemon role's name (`judge-injector`), or whatever an outside process says. */
  executable: string;
  hostname: string;
  pid: number;
  /** The thread within the process; Node runs every role on one thread, 0. */
  threadId: number;
  threadName: string;
  /** What the thread works on, in a word; null for nothing in particular. */
  payload: string | null;
}>;

export type HeartbeatDocument = Document & {
  /** SHA-256 of the executable, as Rucio keys it. */
  executable: string;
  /** The executable itself, cut at Rucio's 4000 characters. */
  readable: string;
  hostname: string;
  pid: number;
  thread_id: number;
  thread_name: string;
  payload: string | null;
  created_at: string;
  updated_at: string;
};

const heartbeatsCollection: CollectionSpec = {
  name: 'heartbeats',
  indexes: [
    { fields: ['readable', 'hostname', 'thread_name', 'pid'] },
    { fields: ['updated_at'] },
    { fields: ['executable', 'updated_at'] },
  ],
};

/** Rucio's `Heartbeat.readable` column holds 4000 characters. */
const READABLE_LENGTH = 4000;

/** Rucio removes heartbeats a day old whenever a daemon starts (`DEFAULT_EXPIRATION_DELAY`). */
export const HEARTBEAT_EXPIRATION_SECONDS = 86_400;

const executableHash = (executable: string): string => createHash('sha256').update(executable).digest('hex');

const heartbeatId = (input: HeartbeatInput): string =>
  [executableHash(input.executable), input.hostname, input.pid, input.threadId].join(' ');

const secondsBefore = (now: Date, seconds: number): string => new Date(now.getTime() - seconds * 1000).toISOString();

export class HeartbeatStore {
  private readonly heartbeats: Collection<HeartbeatDocument>;

  constructor(readStore: ReadStore) {
    this.heartbeats = readStore.collection<HeartbeatDocument>(heartbeatsCollection);
  }

  /**
   * One beat: the thread's heartbeat is created or its time and payload renewed (Rucio's `live`).
   * With `olderThanSeconds`, the heartbeats of the same executable not renewed within that time
   * are expired: whoever beats with it says that a thread silent that long is gone.
   */
  async beat(input: HeartbeatInput, now: Date, olderThanSeconds?: number): Promise<void> {
    const at = now.toISOString();
    await this.heartbeats.updateOne(
      { _id: heartbeatId(input) },
      {
        $set: { updated_at: at, payload: input.payload },
        $setOnInsert: {
          executable: executableHash(input.executable),
          readable: input.executable.slice(0, READABLE_LENGTH),
          hostname: input.hostname,
          pid: input.pid,
          thread_id: input.threadId,
          thread_name: input.threadName,
          created_at: at,
        },
      },
      { upsert: true },
    );
    if (olderThanSeconds !== undefined)
      await this.heartbeats.deleteMany({
        executable: executableHash(input.executable),
        updated_at: { $lt: secondsBefore(now, olderThanSeconds) },
      });
  }

  /** Removes every heartbeat not renewed within `olderThanSeconds` (Rucio's `cardiac_arrest`). */
  expire(now: Date, olderThanSeconds = HEARTBEAT_EXPIRATION_SECONDS): Promise<number> {
    return this.heartbeats.deleteMany({ updated_at: { $lt: secondsBefore(now, olderThanSeconds) } });
  }

  /** Removes a thread's heartbeat: it stopped (Rucio's `die`). */
  async die(input: HeartbeatInput): Promise<void> {
    await this.heartbeats.deleteOne({ _id: heartbeatId(input) });
  }

  /** Every heartbeat, by executable, host and thread name as Rucio lists them (then by process). */
  list(): Promise<HeartbeatDocument[]> {
    return this.heartbeats.find({}, { sort: { readable: 1, hostname: 1, thread_name: 1, pid: 1 } }).toArray();
  }
}
