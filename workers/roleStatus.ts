import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import { messageOf, type CycleReport, type Role } from './role.ts';

/** The last job of a role, as `dms workers status` shows it (stored as JSON, read back through this schema). */
const lastCycleSchema = z
  .object({
    jobId: z.string(),
    startedAt: z.string(),
    durationMs: z.number(),
    done: z.number(),
    skipped: z.number(),
    /** The first few skipped items with their reasons. */
    skippedSample: z.array(z.object({ what: z.string(), reason: z.string() }).readonly()).readonly(),
    /** The job's own line on what it did, if it gave one. */
    detail: z.string().optional(),
    error: z.string().nullable(),
  })
  .readonly();

export type LastCycle = z.infer<typeof lastCycleSchema>;

export type RoleStatus = Readonly<{
  role: string;
  kind: Role['kind'];
  counts: Readonly<Record<'waiting' | 'active' | 'delayed' | 'failed' | 'completed' | 'prioritized', number>>;
  lastCycle: LastCycle | null;
  /** For scheduled roles: the next planned run. */
  nextRunAt: string | null;
}>;

const SAMPLE = 5;

/**
 * Where each role's last job is recorded: one Redis hash per deployment (`<prefix>:roles`), next
 * to the queues, so every worker process writes it and any process can read it.
 */
export class RoleStatusStore {
  private readonly redis: Redis;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix = 'dms',
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  }

  async record(
    role: string,
    jobId: string,
    startedAt: Date,
    durationMs: number,
    outcome: CycleReport | { error: unknown },
  ): Promise<void> {
    const report = 'error' in outcome ? undefined : outcome;
    const cycle: LastCycle = {
      jobId,
      startedAt: startedAt.toISOString(),
      durationMs: Math.round(durationMs),
      done: report?.done ?? 0,
      skipped: report?.skipped.length ?? 0,
      skippedSample: report?.skipped.slice(0, SAMPLE) ?? [],
      ...(report?.detail ? { detail: report.detail } : {}),
      error: 'error' in outcome ? messageOf(outcome.error) : null,
    };
    await this.redis.hset(`${this.prefix}:roles`, role, JSON.stringify(cycle));
  }

  async lastCycles(): Promise<Map<string, LastCycle>> {
    const stored = await this.redis.hgetall(`${this.prefix}:roles`);
    // An entry that does not read as a cycle (written by another version) is left out, not fatal.
    return new Map(
      Object.entries(stored).flatMap(([role, json]) => {
        const cycle = lastCycleSchema.safeParse(JSON.parse(json));
        return cycle.success ? [[role, cycle.data]] : [];
      }),
    );
  }

  /** Queue depths, job outcomes and the last cycle of every role. */
  async statusOf(roles: readonly Role[]): Promise<RoleStatus[]> {
    const last = await this.lastCycles();
    const statuses: RoleStatus[] = [];
    for (const role of roles) {
      const queue = new Queue(role.name, { connection: redisConnectionOptions(this.redisUrl), prefix: this.prefix });
      try {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
        const schedulers = role.kind === 'scheduled' ? await queue.getJobSchedulers() : [];
        const next = schedulers.find((scheduler) => scheduler.key === role.name || scheduler.id === role.name)?.next;
        statuses.push({
          role: role.name,
          kind: role.kind,
          counts: {
            waiting: counts.waiting ?? 0,
            active: counts.active ?? 0,
            delayed: counts.delayed ?? 0,
            failed: counts.failed ?? 0,
            completed: counts.completed ?? 0,
            prioritized: counts.prioritized ?? 0,
          },
          lastCycle: last.get(role.name) ?? null,
          nextRunAt: next ? new Date(next).toISOString() : null,
        });
      } finally {
        await queue.close();
      }
    }
    return statuses;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
