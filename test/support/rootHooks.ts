import { startPrivateRedisServer, type PrivateRedisServer } from '../../infra/queue/redisServer.ts';

/**
 * Heavy servers are started once per test run. Without REDIS_URL the run starts its own
 * redis-server (no persistence) and every test reads its address from `process.env.REDIS_URL`.
 */
let redis: PrivateRedisServer | undefined;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(30_000);
    if (!process.env.REDIS_URL) {
      redis = await startPrivateRedisServer();
      process.env.REDIS_URL = redis.url;
    }
  },
  async afterAll() {
    await redis?.stop();
  },
};
