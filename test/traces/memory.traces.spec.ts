import { MemoryTaskStore } from 'nestjs-priority-queue/stores/memory';
import { describeTraces } from './describe-traces';

describeTraces(
  {
    name: 'memory',
    async create({ clock, agingIntervalMs }) {
      return new MemoryTaskStore({ clock, agingIntervalMs });
    },
  },
  { traces: 4, agingTraces: 2, ops: 1500, backlog: 400 },
);
