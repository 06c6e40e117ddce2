import type Redis from 'ioredis';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer, type RedisServerHandle, type RedisServerOptions } from '../../support/servers/redis-server';
import { newConnection } from './fixtures';
import { stopWorkerProcess, type WorkerChild } from './worker-pool';

/** A real redis-server, a connection, a store and the worker child processes a test starts. */
export interface RedisWorkerEnv {
  server: RedisServerHandle;
  conn: Redis;
  store: RedisTaskStore;
  workers: WorkerChild[];
}

/**
 * Registers beforeAll / afterAll that start a redis-server and an initialised store under
 * `prefix`, and stop the worker children, the store, the connection and the server after the
 * file. The returned object is filled in by beforeAll.
 */
export function useRedisWorkerEnv(prefix: string, serverOptions?: RedisServerOptions, storeOptions: { fairness?: 'tenant' } = {}): RedisWorkerEnv {
  const env = { workers: [] as WorkerChild[] } as unknown as RedisWorkerEnv;
  beforeAll(async () => {
    env.server = await startRedisServer(serverOptions);
    env.conn = newConnection(env.server.url);
    env.store = new RedisTaskStore({ connection: env.conn, prefix, ...storeOptions });
    await env.store.init();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(env.workers.map((w) => stopWorkerProcess(w)));
    await env.store?.close();
    env.conn?.disconnect();
    await env.server?.stop();
  });
  return env;
}
