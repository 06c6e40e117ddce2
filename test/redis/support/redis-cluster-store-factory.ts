import { Cluster } from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import type { StoreFactory } from '../../contract/task-store.contract';
import { startRedisCluster, type RedisClusterHandle } from '../../support/servers/redis-cluster';
import { placeQueue, type QueuePlacement } from './cluster-placement';
import { REDIS_POLICIES } from './redis-store-factory';

export interface ClusterStoreFactory extends StoreFactory {
  /** Where the queue of every store created so far lives. */
  readonly placements: QueuePlacement[];
  /** The running cluster (after beforeAll). */
  cluster(): RedisClusterHandle;
}

/**
 * A StoreFactory on a real 3-master, 3-replica Redis Cluster (started in the caller's beforeAll,
 * never skipped) through an ioredis `Cluster` client. Each create() gets a fresh prefix and a
 * queue name whose hash tag lands on the next master in turn, so a suite's stores are spread
 * over every master.
 */
export function redisClusterStoreFactory(prefix: string): ClusterStoreFactory {
  let cluster: RedisClusterHandle | undefined;
  let client: Cluster | undefined;
  let n = 0;
  const placements: QueuePlacement[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster([...cluster.nodes], { redisOptions: { maxRetriesPerRequest: 3 } });
  }, 120_000);
  return {
    name: 'redis-cluster',
    policies: REDIS_POLICIES,
    placements,
    cluster: () => cluster!,
    async create({ clock, agingIntervalMs, historyLimit, fairness }) {
      const masters = await cluster!.masters();
      const p = await placeQueue(cluster!, `${prefix}${++n}`, 'q', masters[n % masters.length]);
      placements.push(p);
      return new RedisTaskStore({ connection: client!, prefix: p.prefix, queue: p.queue, clock, agingIntervalMs, historyLimit, fairness });
    },
    async teardown() {
      client?.disconnect();
      await cluster?.stop();
    },
  };
}
