import Redis from 'ioredis';
import { RedisTaskStore, type RedisTaskStoreOptions } from '../../../libs/priority-queue/src/redis';
import { startRedisServer, type RedisServerHandle } from '../../support/servers/redis-server';

/** A real redis-server, one connection, and a way to open initialised stores on it. */
export interface RedisStores {
  server: RedisServerHandle;
  conn: Redis;
  /** A store on `conn` (prefix `default` unless given), initialised; closed after the test. */
  open(options: Partial<Omit<RedisTaskStoreOptions, 'connection'>>): Promise<RedisTaskStore>;
  /** Closes the store after the test (one whose init the test runs itself). */
  track(store: RedisTaskStore): RedisTaskStore;
}

/**
 * Registers beforeAll / afterEach / afterAll that start a redis-server and a connection for the
 * file, close the stores each test opened, and stop both after the file. The returned object is
 * filled in by beforeAll.
 */
export function useRedisStores(): RedisStores {
  const opened: RedisTaskStore[] = [];
  const env: RedisStores = {
    server: undefined as unknown as RedisServerHandle,
    conn: undefined as unknown as Redis,
    async open(options) {
      const store = env.track(new RedisTaskStore({ connection: env.conn, ...options }));
      await store.init();
      return store;
    },
    track(store) {
      opened.push(store);
      return store;
    },
  };
  beforeAll(async () => {
    env.server = await startRedisServer();
    env.conn = new Redis(env.server.url, { maxRetriesPerRequest: 3 });
  }, 120_000);
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  afterAll(async () => {
    env.conn?.disconnect();
    await env.server?.stop();
  });
  return env;
}
