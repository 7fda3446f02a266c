import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { errorMessage } from '../typeGuards.ts';

/**
 * Leases on stream names in Redis, for an event store that has no multi-stream transaction
 * (SteppedEventStore). Keys, under a prefix shared by the deployment:
 *
 * - `<prefix>:lease:<stream>`: the random token of the writer that holds the stream, with a TTL
 *   (renewed while a long step runs), so the lease of a writer that died lapses by itself;
 * - `<prefix>:pending:<stream>`: the id of a step that may have appended to the stream but has
 *   not completed, without TTL: it outlives its writer, and whoever meets it completes the step;
 * - `<prefix>:steps:ready`: set once unfinished steps have been read back from the event store's
 *   journal into pending keys. Its absence means Redis lost its keys (a restart without
 *   persistence, a flush), and every acquisition is refused until the journal was read again.
 *
 * All keys of one acquisition are taken or refused together by one Lua script, so two writers
 * never hold parts of each other's sets and nobody waits while holding a lease (no deadlock).
 * Redis must keep these keys: run it with `maxmemory-policy noeviction` (BullMQ requires it too).
 * The scripts touch many keys at once: a Redis Cluster would need them in one hash slot.
 */

export type AcquireOptions = Readonly<{
  /** Set every stream's pending key to this step id along with the leases (a step's owner). */
  pendingStep?: string;
  /** Pending keys naming this step do not refuse the acquisition (the step's completer). */
  allowPendingOf?: string;
  /** Take the leases even when Redis has lost its keys (the journal is being read back). */
  ignoreReset?: boolean;
}>;

export type AcquireOutcome =
  | Readonly<{ kind: 'taken'; lease: StreamLease }>
  /** Another writer holds these streams: wait a little and try again. */
  | Readonly<{ kind: 'held'; streamNames: readonly string[] }>
  /** An unfinished step touches this stream: complete it first. */
  | Readonly<{ kind: 'pending'; streamName: string; stepId: string }>
  /** Redis lost its keys: read unfinished steps back from the journal first. */
  | Readonly<{ kind: 'reset' }>;

export type StreamLeasesOptions = Readonly<{
  /** Key prefix of the deployment (its DMS_QUEUE_PREFIX); default `dms`. */
  keyPrefix?: string;
  /** Lifetime of a lease that is not renewed; default 30 s. */
  ttlMs?: number;
  /** Called when a renewal finds that a lease was lost (expired or taken over). */
  onLost?: (streamNames: readonly string[]) => void;
}>;

export class StreamLeases {
  readonly keyPrefix: string;
  readonly ttlMs: number;
  private readonly onLost: ((streamNames: readonly string[]) => void) | undefined;

  constructor(
    private readonly redis: Redis,
    options: StreamLeasesOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? 'dms';
    this.ttlMs = options.ttlMs ?? 30_000;
    this.onLost = options.onLost;
  }

  leaseKey = (streamName: string): string => `${this.keyPrefix}:lease:${streamName}`;
  pendingKey = (streamName: string): string => `${this.keyPrefix}:pending:${streamName}`;
  get readyKey(): string {
    return `${this.keyPrefix}:steps:ready`;
  }

  /** Takes a lease on every stream, or nothing and says why. */
  async tryAcquire(streamNames: readonly string[], options: AcquireOptions = {}): Promise<AcquireOutcome> {
    const token = randomUUID();
    const reply = textsOf(
      await acquireScript.run(
        this.redis,
        [...streamNames.map(this.leaseKey), ...streamNames.map(this.pendingKey), this.readyKey],
        [
          token,
          String(this.ttlMs),
          String(streamNames.length),
          options.allowPendingOf ?? '',
          options.pendingStep ?? '',
          options.ignoreReset ? '1' : '',
        ],
      ),
    );
    switch (reply[0]) {
      case 'taken':
        return { kind: 'taken', lease: new StreamLease(this, this.redis, token, streamNames) };
      case 'held':
        return { kind: 'held', streamNames: reply.slice(1).map((index) => streamNames[Number(index) - 1]!) };
      case 'pending':
        return { kind: 'pending', streamName: streamNames[Number(reply[1]) - 1]!, stepId: reply[2]! };
      case 'reset':
        return { kind: 'reset' };
      default:
        throw new Error(`Unexpected answer of the lease script: ${JSON.stringify(reply)}`);
    }
  }

  /** Deletes the pending keys of these streams that still name the step (a finished or never started step). */
  async clearPending(streamNames: readonly string[], stepId: string): Promise<void> {
    if (streamNames.length === 0) return;
    await clearPendingScript.run(this.redis, streamNames.map(this.pendingKey), [stepId]);
  }

  /** Whether unfinished steps are known to Redis (false after it lost its keys). */
  async isReady(): Promise<boolean> {
    return (await this.redis.exists(this.readyKey)) === 1;
  }

  /**
   * After the journal was read back: sets the pending keys of the unfinished steps (where no
   * other step's key is set) and marks Redis ready, in one script.
   */
  async restore(steps: readonly Readonly<{ stepId: string; streamNames: readonly string[] }>[]): Promise<void> {
    const keys: string[] = [];
    const stepIds: string[] = [];
    for (const step of steps) {
      for (const streamName of step.streamNames) {
        keys.push(this.pendingKey(streamName));
        stepIds.push(step.stepId);
      }
    }
    await restoreScript.run(this.redis, [...keys, this.readyKey], stepIds);
  }

  /** @internal Used by StreamLease. */
  reportLost(streamNames: readonly string[]): void {
    this.onLost?.(streamNames);
  }
}

/** Leases held on some streams; renewed in the background until released. */
export class StreamLease {
  private released = false;
  private renewal: NodeJS.Timeout | undefined;
  /** True once a renewal found that another writer could have taken a stream over. */
  lost = false;

  constructor(
    private readonly leases: StreamLeases,
    private readonly redis: Redis,
    readonly token: string,
    readonly streamNames: readonly string[],
  ) {
    this.renewal = setInterval(() => void this.renew(), Math.max(10, Math.floor(leases.ttlMs / 3)));
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    if (this.released) return;
    try {
      const lost = Number(
        await renewScript.run(this.redis, this.streamNames.map(this.leases.leaseKey), [
          this.token,
          String(this.leases.ttlMs),
        ]),
      );
      if (lost > 0 && !this.released && !this.lost) {
        this.lost = true;
        this.leases.reportLost(this.streamNames);
      }
    } catch {
      // Redis unreachable: the next renewal tries again; the lease may lapse meanwhile.
    }
  }

  /**
   * Deletes the leases this writer still holds and, with `clearPendingOf`, the pending keys that
   * name that step. Releasing twice does nothing.
   */
  async release(options: Readonly<{ clearPendingOf?: string }> = {}): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.renewal);
    await releaseScript.run(
      this.redis,
      [...this.streamNames.map(this.leases.leaseKey), ...this.streamNames.map(this.leases.pendingKey)],
      [this.token, String(this.streamNames.length), options.clearPendingOf ?? ''],
    );
  }

  /** Stops renewing without touching Redis: the leases lapse after their TTL (a writer that gives up). */
  abandon(): void {
    this.released = true;
    clearInterval(this.renewal);
  }
}

/** A script's reply as the list of strings the acquiring script answers with. */
const textsOf = (reply: unknown): string[] => {
  if (Array.isArray(reply) && reply.every((item) => typeof item === 'string')) return reply;
  throw new Error(`A lease script answered ${JSON.stringify(reply)}, not a list of strings`);
};

/** A Lua script run by EVALSHA, loaded by EVAL the first time a server does not know it. */
class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!errorMessage(error).startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

// KEYS: n lease keys, n pending keys, the ready key.
// ARGV: token, ttl (ms), n, step whose pending keys are allowed, step to mark pending, ignore reset.
const acquireScript = new LuaScript(`
local n = tonumber(ARGV[3])
if ARGV[6] ~= '1' and redis.call('EXISTS', KEYS[2 * n + 1]) == 0 then return {'reset'} end
local held = {}
for i = 1, n do
  local owner = redis.call('GET', KEYS[i])
  if owner and owner ~= ARGV[1] then held[#held + 1] = tostring(i) end
end
if #held > 0 then
  table.insert(held, 1, 'held')
  return held
end
for i = 1, n do
  local step = redis.call('GET', KEYS[n + i])
  if step and step ~= ARGV[4] and step ~= ARGV[5] then return {'pending', tostring(i), step} end
end
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  if ARGV[5] ~= '' then redis.call('SET', KEYS[n + i], ARGV[5]) end
end
return {'taken'}
`);

// KEYS: n lease keys, n pending keys. ARGV: token, n, step whose pending keys to delete ('' none).
const releaseScript = new LuaScript(`
local n = tonumber(ARGV[2])
for i = 1, n do
  if ARGV[3] ~= '' and redis.call('GET', KEYS[n + i]) == ARGV[3] then redis.call('DEL', KEYS[n + i]) end
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1
`);

// KEYS: lease keys. ARGV: token, ttl (ms). Answers how many leases are no longer this token's.
const renewScript = new LuaScript(`
local lost = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('PEXPIRE', KEYS[i], ARGV[2]) else lost = lost + 1 end
end
return lost
`);

// KEYS: pending keys. ARGV: step id.
const clearPendingScript = new LuaScript(`
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1
`);

// KEYS: pending keys, then the ready key. ARGV: the step id of each pending key.
const restoreScript = new LuaScript(`
for i = 1, #KEYS - 1 do
  redis.call('SET', KEYS[i], ARGV[i], 'NX')
end
redis.call('SET', KEYS[#KEYS], '1')
return 1
`);
