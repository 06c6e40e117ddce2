import { randomUUID } from 'node:crypto';
import type { MemoryTaskStore } from 'nestjs-priority-queue';

let counter = 0;
const prefix = randomUUID().slice(0, 24);

/**
 * A task id as the tree under test makes them for its memory store: the store's own newTaskId,
 * or (trees before issue 12) a prefix and a 12-digit hex counter, flattened into a fresh string
 * as the old bench's ids were (memory-create-ab.ts, memory-create-order.ts).
 */
export function treeTaskId(store: MemoryTaskStore): string {
  const own = (store as { newTaskId?: () => string }).newTaskId;
  if (own !== undefined) return own.call(store);
  const s = prefix + (++counter).toString(16).padStart(12, '0');
  return String.fromCharCode.apply(null, Array.from(s, (c) => c.charCodeAt(0)));
}
