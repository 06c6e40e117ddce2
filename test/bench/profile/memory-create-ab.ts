/**
 * The memory benchmark's "store.create alone" row (one create([task]) per task on a fresh store)
 * for two source trees in ONE process, rows alternating A, B, A, B, ... on fresh stores, so that
 * both trees see the same machine load; issue 12 §5.
 *   node --max-semi-space-size=64 --expose-gc -r ./test/support/register.js \
 *     test/bench/profile/memory-create-ab.ts <tree A> <tree B> [rows per tree]
 * A tree is a checkout's root (its libs/priority-queue/src is loaded; its code is JIT-compiled
 * apart from the other tree's). Prints tasks per second of the process's user CPU time per row;
 * row 1 of each tree is its cold row (first compilation of its create path).
 * Env: N tasks per row (default 200,000); SHAPE=queue gives the tasks PriorityQueue's NewTask
 * shape (with boost and payloadFingerprint) instead of the benchmark's literal; CALL=createOne
 * calls store.createOne (PriorityQueue.submit's path) instead of create([task]); BATCH=<k> calls
 * create() with k tasks at a time (bench:memory's "store.create alone, batches" row: BATCH=10000).
 *
 * For a count that does not depend on other load on the machine, run it under
 * `valgrind --tool=none` (threads serialised; user CPU then follows the instructions executed,
 * JIT compilation included) and swap A and B in a second run: a row's position in the process
 * matters too (the second cold row of a process finds the heap and the compiler queue in another
 * state), so compare the same positions.
 */
import { resolve } from 'node:path';
import type { MemoryTaskStore, NewTask } from 'nestjs-priority-queue';
import { seededRandom } from '../lib/rng';
import { treeTaskId } from './support/tree-task-id';

const trees = process.argv.slice(2, 4).map((t) => resolve(t));
const ROWS = Number(process.argv[4] ?? 3);
const N = Number(process.env.N ?? 200_000);
const QUEUE_SHAPE = process.env.SHAPE === 'queue';
const CREATE_ONE = process.env.CALL === 'createOne';
const BATCH = Number(process.env.BATCH ?? 0);
const gc: () => void = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

type Lib = { MemoryTaskStore: new () => MemoryTaskStore };


function tasks(store: MemoryTaskStore, seed: number): NewTask[] {
  const random = seededRandom(seed);
  const out = new Array<NewTask>(N);
  for (let i = 0; i < N; i++) {
    const id = treeTaskId(store);
    const priority = Math.floor(random() * 2001) - 1000;
    const accountId = `acc-${Math.floor(random() * 1000)}`;
    const payload = { n: i + 1, url: 'https://example.test/job' };
    out[i] = QUEUE_SHAPE
      ? { id, idempotencyKey: null, type: 'bench', payload, priority, providerKey: 'provider', accountId, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, boost: null, maxAttempts: 5, idempotent: true, payloadFingerprint: undefined }
      : { id, idempotencyKey: null, type: 'bench', payload, priority, providerKey: 'provider', accountId, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 5, idempotent: true };
  }
  return out;
}

/** One row on a fresh store: tasks per second of user CPU time. */
async function row(lib: Lib, seed: number): Promise<number> {
  const store = new lib.MemoryTaskStore();
  await store.init();
  await store.setLimits({ kind: 'provider', providerKey: 'provider', accountConcurrency: 50 });
  const news = tasks(store, seed);
  gc();
  const c0 = process.cpuUsage();
  if (CREATE_ONE) for (const t of news) await store.createOne(t);
  else if (BATCH > 0) for (let i = 0; i < N; i += BATCH) await store.create(news.slice(i, i + BATCH));
  else for (const t of news) await store.create([t]);
  return Math.round(N / (process.cpuUsage(c0).user / 1e6));
}

async function main(): Promise<void> {
  if (trees.length !== 2) throw new Error('usage: memory-create-ab.ts <tree A> <tree B> [rows per tree]');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const libs = trees.map((t) => require(resolve(t, 'libs/priority-queue/src')) as Lib);
  const rates: number[][] = [[], []];
  for (let r = 0; r < ROWS; r++) for (let k = 0; k < 2; k++) rates[k].push(await row(libs[k], 20_240_611 + r));
  console.log(`store.create alone, ${N.toLocaleString('en-US')} tasks per row, ${QUEUE_SHAPE ? "PriorityQueue's" : "the benchmark's"} task shape, ${CREATE_ONE ? 'createOne' : BATCH > 0 ? `create() of ${BATCH}` : 'create([task])'}; tasks/s of user CPU, rows in run order A, B, A, B, ...`);
  for (let k = 0; k < 2; k++) console.log(`  ${'AB'[k]} ${trees[k]}: ${rates[k].map((x) => x.toLocaleString('en-US')).join('  ')}`);
  console.log(`  B / A per row: ${rates[0].map((a, r) => (rates[1][r] / a).toFixed(2)).join('  ')}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
