import Redis from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { describeTaskStoreContract } from './task-store.contract';

// A real redis-server (Debian package, installed when missing); never skipped.
let server: RedisServerHandle;
let connection: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  connection = new Redis(server.url, { maxRetriesPerRequest: 3 });
}, 120_000);

describeTaskStoreContract({
  name: 'redis',
  async create({ clock, agingIntervalMs }) {
    return new RedisTaskStore({ connection, prefix: `contract${++n}`, clock, agingIntervalMs });
  },
  async teardown() {
    connection?.disconnect();
    await server?.stop();
  },
});
