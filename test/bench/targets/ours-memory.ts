import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import type { BenchEnv, BenchTarget } from '../target';
import { benchHistoryLimit, ourTarget, variantId, type OurVariant } from './ours';

/** Our in-process store: the cost of the library itself, without a network hop. */
export function ourMemoryTarget(_env?: BenchEnv, variant: OurVariant = {}): BenchTarget {
  return ourTarget({
    id: variantId('ours-memory', variant),
    label: 'ours (memory)',
    server: 'memory',
    tuning: 'MemoryTaskStore',
    removeOnComplete: variant.removeOnComplete,
    async open() {},
    async close() {},
    async createStore() {
      return new MemoryTaskStore({ historyLimit: benchHistoryLimit() });
    },
    async dropNamespace() {},
  });
}
