import Redis from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { describeModelBasedTest } from './model-based';

// A real redis-server (Debian package); never skipped. One key prefix per run.
jest.setTimeout(240_000);
let server: RedisServerHandle;
let connection: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  connection = new Redis(server.url, { maxRetriesPerRequest: 3 });
}, 120_000);

describeModelBasedTest({
  name: 'redis',
  async create({ clock, agingIntervalMs }) {
    return new RedisTaskStore({ connection, prefix: `model${++n}`, clock, agingIntervalMs });
  },
  async teardown() {
    connection?.disconnect();
    await server?.stop();
  },
});
