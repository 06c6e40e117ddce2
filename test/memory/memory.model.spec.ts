import { MemoryTaskStore } from 'nestjs-priority-queue';
import { describeModelBasedTest } from '../model/model-based';

const factory = {
  async create({ clock, agingIntervalMs }: { clock: { now(): number }; agingIntervalMs?: number }) {
    return new MemoryTaskStore({ clock, agingIntervalMs });
  },
};

// the default runs, plus more runs on other seeds: the memory store is fast enough for them
describeModelBasedTest({ name: 'memory', ...factory });
describeModelBasedTest({ name: 'memory (more seeds)', ...factory }, { seed: 777_001, numRuns: 150, agingRuns: 60, maxOps: 120 });
