/**
 * The first rows of `npm run bench:memory` for ONE source tree, in the bench's own order: on a
 * fresh store 200,000 awaited PriorityQueue.submit calls, then on another fresh store 200,000
 * `store.create([task])` (the "same, store.create alone" row; issue 12 §5). Unlike
 * memory-create-ab.ts (two trees in one process, no submits before), the create row here meets
 * the store code exactly as the bench leaves it: compiled and type-fed by the submit row.
 *   node --max-semi-space-size=64 --expose-gc -r ./test/support/register.js \
 *     test/bench/profile/memory-create-order.ts <tree>
 * Prints user CPU and minor page faults per task of each row. Env: N tasks per row (default 200,000); SHAPE=queue gives
 * the create row's tasks PriorityQueue's NewTask shape (boost and payloadFingerprint) instead of
 * the bench's old literal without them; SUBMITS=0 skips the submit row; MARK=1 prints a line
 * before each row (to find the rows in --trace-deopt / --trace-opt output); WARM=1 runs garbage
 * through the young generation before the create row (its pages then are touched in every tree).
 *
 * Instructions, exact on a loaded machine: each row starts and ends with process.cpuUsage()
 * (libuv's uv_getrusage, which nothing else calls here), so under
 *   valgrind --tool=callgrind --dump-before=uv_getrusage --cache-sim=no --smc-check=all-non-file node ...
 * the files callgrind.out.<pid>.<k> hold the counts between two such calls: the submit row is the
 * 2nd part dumped, the create row the 4th (read "summary:" or "totals:" in each). CHUNK=<k> adds a
 * dump point after every k creates of the create row (its parts 4, 5, ...: the cold start apart
 * from the steady state).
 */
import { resolve } from 'node:path';
import type { NewTask } from 'nestjs-priority-queue';
import { memoryBenchSetup, type MemoryBenchLib } from '../lib/memory-setup';
import { treeTaskId } from './support/tree-task-id';

const tree = resolve(process.argv[2] ?? '.');
const N = Number(process.env.N ?? 200_000);
const SUBMITS = Number(process.env.SUBMITS ?? N);
const QUEUE_SHAPE = process.env.SHAPE === 'queue';
const MARK = process.env.MARK === '1';
const CHUNK = Number(process.env.CHUNK ?? 0);
const WARM = process.env.WARM === '1';
const SEED = 20_240_601;
const gc: () => void = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

// the bench's imports: the store from the package root, the queue and registry from core/
// eslint-disable-next-line @typescript-eslint/no-require-imports
const lib = { ...require(resolve(tree, 'libs/priority-queue/src/core')), ...require(resolve(tree, 'libs/priority-queue/src')) } as MemoryBenchLib;


/** memory.bench.ts's setup, over this tree's classes. */
const setup = (seed: number) => memoryBenchSetup(lib, seed);

/** User CPU µs per task of `f`, between two process.cpuUsage() calls (the callgrind dump points). */
async function row(what: string, n: number, f: () => Promise<void>): Promise<number> {
  if (MARK) console.log(`--- row: ${what}`);
  gc();
  const faults0 = process.resourceUsage().minorPageFault;
  const c0 = process.cpuUsage();
  await f();
  const us = process.cpuUsage(c0).user / n;
  faults.push(`${what} ${((process.resourceUsage().minorPageFault - faults0) / n).toFixed(3)}`);
  return us;
}

/** Minor page faults per task of each row (first touches of fresh memory: kernel time, not user CPU). */
const faults: string[] = [];

async function main(): Promise<void> {
  const out: string[] = [];
  // the submit row's store stays alive through the create row, as in the bench (one block
  // context holds both stores there): its closures and objects stay in the compiled code
  let first: unknown = null;
  if (SUBMITS > 0) {
    const s = await setup(SEED);
    first = s;
    const us = await row('submit', SUBMITS, async () => {
      for (let i = 0; i < SUBMITS; i++) await s.queue.submit(s.input());
    });
    out.push(`submit one by one ${us.toFixed(3)} µs`);
  }
  const s2 = await setup(SEED + 10);
  const news = new Array<NewTask>(N);
  for (let i = 0; i < N; i++) {
    const x = s2.input();
    const id = treeTaskId(s2.store);
    news[i] = QUEUE_SHAPE
      ? { id, idempotencyKey: null, type: 'bench', payload: x.payload, priority: x.priority!, providerKey: 'provider', accountId: x.accountId!, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, boost: null, maxAttempts: 5, idempotent: true, payloadFingerprint: undefined }
      : { id, idempotencyKey: null, type: 'bench', payload: x.payload, priority: x.priority!, providerKey: 'provider', accountId: x.accountId!, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 5, idempotent: true };
  }
  if (WARM) {
    // short-lived garbage through the whole young generation, so that the row does not pay the
    // first touches of its pages (a tree whose id making allocates more, like the old bench's
    // taskId(), has touched them already during the task generation above)
    let junk: number[] = [];
    for (let i = 0; i < 4e6; i++) junk = [i, i + 1, i + 2, i + 3, i + 4, i + 5];
    if (junk.length === 0) throw new Error('unreachable');
  }
  const us = await row('create', N, async () => {
    if (CHUNK > 0) {
      // one more callgrind dump point every CHUNK creates: the row's cost over its course
      for (let i = 0; i < N; i++) {
        await s2.store.create([news[i]]);
        if ((i + 1) % CHUNK === 0) process.cpuUsage();
      }
    } else for (const t of news) await s2.store.create([t]);
  });
  out.push(`store.create alone ${us.toFixed(3)} µs`);
  if (first === s2) throw new Error('unreachable'); // keeps the first store alive to here
  console.log(`${tree} (${QUEUE_SHAPE ? "PriorityQueue's" : "the bench's old"} task shape), user CPU per task: ${out.join(', ')}; minor page faults per task: ${faults.join(', ')}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
