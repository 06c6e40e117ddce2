import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { describeModelBasedTest } from './model-based';

describeModelBasedTest(
  {
    name: 'memory',
    policies: { fairness: true, boost: true },
    async create({ clock, agingIntervalMs, fairness }) {
      return new MemoryTaskStore({ clock, agingIntervalMs, fairness });
    },
  },
  { numRuns: 100, agingRuns: 40, wideRuns: 60 },
);
