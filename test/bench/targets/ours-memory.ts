import { MemoryTaskStore } from 'nestjs-priority-queue/stores/memory';
import type { BenchTarget } from '../target';
import { ourTarget } from './ours';

/** Our in-process store: the cost of the library itself, without a network hop. */
export function ourMemoryTarget(): BenchTarget {
  return ourTarget({
    id: 'ours-memory',
    label: 'ours (memory)',
    server: 'memory',
    tuning: 'MemoryTaskStore',
    async open() {},
    async close() {},
    async createStore() {
      return new MemoryTaskStore();
    },
    async dropNamespace() {},
  });
}
