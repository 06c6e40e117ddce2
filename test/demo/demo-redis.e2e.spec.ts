import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { demoSuite } from './support/demo-suite';

let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.stop();
});

demoSuite('redis', () => ({ kind: 'redis', url: redis.url }));
