import { ManualClock } from '../../libs/priority-queue/src/core';
import { assertPlacement } from '../redis/support/cluster-placement';
import { redisClusterStoreFactory } from '../redis/support/redis-cluster-store-factory';
import { describeTaskStoreContract } from './task-store.contract';

/** The contract suite on a 3-master Redis Cluster; consecutive stores live on different masters. */
const factory = redisClusterStoreFactory('contract');

it('spreads the suite\'s queues over every master (CLUSTER KEYSLOT + slot map)', async () => {
  const stores = await Promise.all([1, 2, 3, 4, 5, 6].map(() => factory.create({ clock: new ManualClock() })));
  const masters = await factory.cluster().masters();
  expect(masters).toHaveLength(3);
  const placed = factory.placements.slice(-6);
  for (const p of placed) await assertPlacement(factory.cluster(), p);
  expect(new Set(placed.map((p) => p.master.port))).toEqual(new Set(masters.map((m) => m.port)));
  for (const s of stores) {
    await s.init();
    await s.close();
  }
});

describeTaskStoreContract(factory);
