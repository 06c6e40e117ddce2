import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { describeTaskStoreContract } from './task-store.contract';

describeTaskStoreContract({
  name: 'memory',
  policies: { fairness: true, boost: true },
  async create({ clock, agingIntervalMs, historyLimit, fairness }) {
    return new MemoryTaskStore({ clock, agingIntervalMs, historyLimit, fairness });
  },
});
