/**
 * What per-task history costs the memory store: CPU per drained task (create excluded: claim in
 * batches of 100, complete each) with historyLimit 0 and 20, interleaved, best of several rounds.
 * `node --expose-gc -r ./test/support/register.js test/bench/profile/memory-history.ts [tasks=200000] [rounds=7]`
 */
import { randomUUID } from 'node:crypto';
import { TaskStatus, type NewTask } from '../../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';

async function drain(limit: number, n: number): Promise<number> {
  const store = new MemoryTaskStore({ historyLimit: limit });
  const tasks: NewTask[] = Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    idempotencyKey: null,
    type: 't',
    payload: { i },
    priority: i % 7,
    providerKey: `p${i % 4}`,
    accountId: null,
    tenantId: `t${i % 50}`,
    concurrencyKey: null,
    delayMs: 0,
    timeoutMs: null,
    maxAttempts: 3,
    idempotent: true,
  }));
  for (let i = 0; i < n; i += 10_000) await store.create(tasks.slice(i, i + 10_000));
  (globalThis as { gc?: () => void }).gc?.();
  const c0 = process.cpuUsage();
  for (;;) {
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 100, leaseMs: 60_000 });
    if (claimed.length === 0) break;
    for (const t of claimed) await store.complete({ id: t.id, leaseId: t.leaseId!, version: t.version }, { status: TaskStatus.SUCCEEDED, result: 1 });
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 200_000);
  const rounds = Number(process.argv[3] ?? 7);
  const best: Record<number, number> = {};
  for (let r = 0; r < rounds; r++) {
    for (const limit of [0, 20]) {
      const us = await drain(limit, n);
      best[limit] = Math.min(best[limit] ?? Infinity, us);
    }
  }
  console.log(`memory drain, ${n} tasks, best of ${rounds}: history off ${best[0].toFixed(2)} µs/task, on (20) ${best[20].toFixed(2)} µs/task (+${(((best[20] - best[0]) / best[0]) * 100).toFixed(1)}%)`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
