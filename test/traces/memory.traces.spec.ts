import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { describeTraces } from './describe-traces';

describeTraces(
  {
    name: 'memory',
    async create({ clock, agingIntervalMs }) {
      return new MemoryTaskStore({ clock, agingIntervalMs });
    },
  },
  { traces: 3, agingTraces: 1, ops: 1500, backlog: 400 },
);
