import type { ClusterOptions } from 'ioredis';

/**
 * The ioredis Cluster options docs/REDIS.md recommends for workers, used by the worker processes
 * of the cluster tests: a command whose node went away is re-sent every 200 ms (after a slot
 * map refresh) for up to 100 tries, i.e. 20 s, which covers detection (cluster-node-timeout) plus
 * the replica's election; each node connection queues commands without a retry limit meanwhile.
 */
export const CLUSTER_CLIENT_OPTIONS: ClusterOptions = {
  retryDelayOnFailover: 200,
  retryDelayOnClusterDown: 200,
  retryDelayOnTryAgain: 200,
  maxRedirections: 100,
  redisOptions: { maxRetriesPerRequest: null },
};
