import { redisClusterStoreFactory } from '../redis/support/redis-cluster-store-factory';
import { describeModelBasedTest } from './model-based';

/** The model-based test on a 3-master Redis Cluster: each run's queue on the next master in turn. */
jest.setTimeout(240_000);
const factory = redisClusterStoreFactory('model');
describeModelBasedTest(factory);

it("spread the runs' queues over every master (each placed by CLUSTER KEYSLOT + the slot map)", () => {
  expect(factory.placements.length).toBeGreaterThanOrEqual(40);
  expect(new Set(factory.placements.map((p) => p.master.port)).size).toBe(3);
});
