import { MemoryTaskStore } from 'nestjs-priority-queue';
import { describeModelBasedTest } from '../model/model-based';

const factory = {
  policies: { fairness: true, boost: true },
  async create({ clock, agingIntervalMs, fairness }: { clock: { now(): number }; agingIntervalMs?: number; fairness?: 'tenant' }) {
    return new MemoryTaskStore({ clock, agingIntervalMs, fairness });
  },
};

// test/model/memory.model.spec.ts runs the default seeds (and test/contract/memory.contract.spec.ts
// the contract suite); these are more runs on other seeds: the memory store is fast enough for them
describeModelBasedTest({ name: 'memory (more seeds)', ...factory }, { seed: 777_001, numRuns: 150, agingRuns: 60, maxOps: 120 });
