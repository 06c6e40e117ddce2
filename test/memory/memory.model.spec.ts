import { MemoryTaskStore } from 'nestjs-priority-queue';
import { describeModelBasedTest } from '../model/model-based';

describeModelBasedTest({
  name: 'memory',
  async create({ clock, agingIntervalMs }) {
    return new MemoryTaskStore({ clock, agingIntervalMs });
  },
});
