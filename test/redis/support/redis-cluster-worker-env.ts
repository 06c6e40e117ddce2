import { Cluster } from 'ioredis';
import { RedisTaskStore, type RedisTaskStoreOptions } from '../../../libs/priority-queue/src/redis';
import { startRedisCluster, type RedisClusterHandle, type RedisClusterOptions } from '../../support/servers/redis-cluster';
import { CLUSTER_CLIENT_OPTIONS } from './cluster-client';
import { assertPlacement, placeQueue, type QueuePlacement } from './cluster-placement';
import { stopWorkerProcess, type WorkerChild } from './worker-pool';

/** A real Redis Cluster, a Cluster client, one store per queue and the worker children a test starts. */
export interface RedisClusterWorkerEnv {
  cluster: RedisClusterHandle;
  client: Cluster;
  /** queues[i] lives on a master of its own while there are masters (CLUSTER KEYSLOT + slot map). */
  queues: QueuePlacement[];
  stores: RedisTaskStore[];
  workers: WorkerChild[];
}

/**
 * Registers beforeAll / afterAll that start a 3-master Redis Cluster and `queueCount` initialised
 * stores under `prefix`, each queue placed on the next master in turn, and stop the worker
 * children, the stores, the client and the cluster after the file. The returned object is
 * filled in by beforeAll.
 */
export function useRedisClusterWorkerEnv(
  prefix: string,
  queueCount: number,
  opts: { cluster?: RedisClusterOptions; store?: Partial<RedisTaskStoreOptions> } = {},
): RedisClusterWorkerEnv {
  const env = { workers: [] as WorkerChild[], stores: [] as RedisTaskStore[], queues: [] as QueuePlacement[] } as RedisClusterWorkerEnv;
  beforeAll(async () => {
    env.cluster = await startRedisCluster(opts.cluster);
    env.client = new Cluster([...env.cluster.nodes], CLUSTER_CLIENT_OPTIONS);
    env.client.on('error', () => undefined);
    const masters = await env.cluster.masters();
    for (let i = 0; i < queueCount; i++) {
      const p = await placeQueue(env.cluster, prefix, `q${i}`, masters[i % masters.length]);
      await assertPlacement(env.cluster, p);
      env.queues.push(p);
      const store = new RedisTaskStore({ ...opts.store, connection: env.client, prefix: p.prefix, queue: p.queue });
      await store.init();
      env.stores.push(store);
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(env.workers.map((w) => stopWorkerProcess(w)));
    await Promise.all(env.stores.map((s) => s.close()));
    env.client?.disconnect();
    await env.cluster?.stop();
  });
  return env;
}
