import { startPrivateRedisServer, type PrivateRedisServer } from '../../infra/queue/redisServer.ts';
import { stopSharedBroker } from './rabbitmq.ts';

/**
 * Heavy servers are started once per test run. Without REDIS_URL the run starts its own
 * redis-server (no persistence) and every test reads its address from `process.env.REDIS_URL`.
 * RabbitMQ starts only when a suite of message delivery first asks for it (support/rabbitmq.ts),
 * and stops here.
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
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedBroker();
    await redis?.stop();
  },
};
