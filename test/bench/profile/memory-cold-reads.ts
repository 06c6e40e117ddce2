/**
 * What a claim at 1,000,000 pending pays just to read its tasks (issue 2, claim-cost ratio).
 * Reads the fields of 64 random pending tasks (TaskTable.prefetch: a task's number block,
 * reference row and payload object, as claimSubmissions does for the tasks it picked) and reports
 * the median ns per task, in a store of 1,000 and one of `pending` tasks, in three contexts:
 *   idle          the reads alone, batch after batch;
 *   claim loop    a claim of 64 + their completes between two measured batches;
 *   + refill      the same plus 64 new tasks (the benchmark's claim-cost loop).
 * `node --max-semi-space-size=64 -r ./test/support/register.js test/bench/profile/memory-cold-reads.ts [pending]`
 * The reads are the same in every context; only what the process touched in between differs (each
 * batch of the loop touches hundreds of distinct 4 KB pages: tasks, lanes, indexes, new objects).
 */
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import { TaskStatus, type NewTask } from '../../../libs/priority-queue/src/core/task';
import type { TaskTable } from '../../../libs/priority-queue/src/stores/memory/task-table';
import { seededRandom } from '../lib/rng';

const PENDING = Number(process.argv[2] ?? 1_000_000);
const BATCHES = 3_000;
const random = seededRandom(5);
let n = 0;
const idPrefix = 'cold-read-';

function newTask(): NewTask {
  n++;
  return { id: idPrefix + n, idempotencyKey: null, type: 'bench', payload: { n, url: 'https://example.test/job' }, priority: Math.floor(random() * 2001) - 1000, providerKey: 'provider', accountId: `acc-${Math.floor(random() * 1000)}`, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 5, idempotent: true };
}

type Context = 'idle' | 'claim loop' | '+ refill';

async function coldReadNs(pending: number, context: Context): Promise<number> {
  const store = new MemoryTaskStore();
  await store.init();
  for (let i = 0; i < pending; i += 10_000) await store.create(Array.from({ length: Math.min(10_000, pending - i) }, newTask));
  const table = (store as unknown as { m: { t: TaskTable } }).m.t; // the store's TaskLifecycle holds the table
  const times: number[] = [];
  let sink = 0;
  for (let b = 0; b < BATCHES; b++) {
    if (context !== 'idle') {
      const { claimed } = await store.claimSubmissions({ owner: 'cold', limit: 64, leaseMs: 30_000 });
      for (const t of claimed) await store.complete({ id: t.id, leaseId: t.leaseId!, version: t.version }, { status: TaskStatus.SUCCEEDED, result: null });
      if (context === '+ refill') await store.create(Array.from({ length: claimed.length }, newTask));
      if (b % 100 === 99) await store.purge(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    }
    const slots: number[] = [];
    for (let i = 0; i < 64; i++) slots.push(Math.floor(random() * table.size) | 0);
    const t0 = process.hrtime.bigint();
    table.prefetch(slots);
    times.push(Number(process.hrtime.bigint() - t0) / slots.length);
    sink += table.sink;
  }
  await store.close();
  times.sort((a, b) => a - b);
  return sink === -1 ? 0 : times[times.length >> 1];
}

async function main(): Promise<void> {
  console.log(`median ns per task to read 64 random tasks' fields (${BATCHES} batches)`);
  console.log('context      1,000 pending  ' + PENDING.toLocaleString('en-US') + ' pending');
  for (const context of ['idle', 'claim loop', '+ refill'] as const) {
    const small = await coldReadNs(1_000, context);
    const big = await coldReadNs(PENDING, context);
    console.log(`${context.padEnd(12)} ${small.toFixed(0).padStart(13)}  ${big.toFixed(0).padStart(13)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
