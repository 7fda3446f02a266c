import { RoleStatusStore, type LastCycle } from '../../workers/roleStatus.ts';
import { eventually } from './eventually.ts';
import type { TestServer } from './server.ts';

/**
 * Waits until the server's daemon `role` has finished `count` cycles that began after this call:
 * positive evidence that it looked at what the test set up. A test that checks that something did
 * NOT happen (a locked replica kept, a dry run) waits for this, never for a fixed time. Each cycle
 * is seen through its record for `dms workers status` (workers/roleStatus.ts); a cycle that failed
 * does not count. Answers the last of them, with what it reported.
 */
export const roleCycles = async (
  server: TestServer,
  role: string,
  count = 1,
  timeoutMs = 30_000,
): Promise<LastCycle> => {
  const { redisUrl, services } = server.runtime;
  if (!redisUrl) throw new Error('roleCycles needs a server whose workers run');
  const since = services.clock.now();
  const status = new RoleStatusStore(redisUrl, services.config.queuePrefix);
  const seen = new Set<string>();
  let last: LastCycle | undefined;
  let latest: LastCycle | undefined;
  try {
    await eventually(
      async () => {
        latest = (await status.lastCycles()).get(role);
        if (latest && latest.error === null && Date.parse(latest.startedAt) > since) {
          seen.add(latest.jobId);
          last = latest;
        }
        return seen.size >= count;
      },
      timeoutMs,
      `${count} cycles of ${role}`,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; its last cycle: ${JSON.stringify(latest ?? null)}`);
    });
    return last!;
  } finally {
    await status.close();
  }
};
