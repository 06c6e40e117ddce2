import Redis from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { dashboardApiSuite } from './support/dashboard-api.suite';

let server: RedisServerHandle;
let connection: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  connection = new Redis(server.url, { maxRetriesPerRequest: 3 });
}, 120_000);

afterAll(async () => {
  connection?.disconnect();
  await server?.stop();
});

dashboardApiSuite('redis', async () => new RedisTaskStore({ connection, prefix: `dash${++n}:` }));
