import { MemoryTaskStore } from 'nestjs-priority-queue';
import { describeTaskStoreContract } from '../contract/task-store.contract';

describeTaskStoreContract({
  name: 'memory',
  async create({ clock, agingIntervalMs }) {
    return new MemoryTaskStore({ clock, agingIntervalMs });
  },
});
