import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { INT32_MAX, INT32_MIN, TaskStatus, type LimitUpdate, type NewTask, type Task } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';

export function auditDir(): string {
  return mkdtempSync(join(tmpdir(), 'pq-audit-'));
}

/** Deterministic PRNG (mulberry32), the benchmark's. */
export { seededRandom as seeded } from '../../bench/lib/rng';

export function pick<T>(r: () => number, weighted: ReadonlyArray<readonly [T, number]>): T {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  let x = r() * total;
  for (const [v, w] of weighted) {
    if ((x -= w) < 0) return v;
  }
  return weighted[weighted.length - 1][0];
}

export const PRIORITIES = [INT32_MIN, -7, 0, 0, 0, 5, 42, INT32_MAX] as const;

export function noopTask(over: Partial<NewTask>): NewTask {
  return {
    id: randomUUID(),
    idempotencyKey: null,
    type: 'noop',
    payload: null,
    priority: 0,
    providerKey: 'p',
    accountId: null,
    tenantId: null,
    concurrencyKey: null,
    delayMs: 0,
    timeoutMs: null,
    maxAttempts: 100,
    idempotent: true,
    ...over,
  };
}

export async function createAll(store: RedisTaskStore, tasks: readonly NewTask[], batch = 2000): Promise<Task[]> {
  const out: Task[] = [];
  for (let i = 0; i < tasks.length; i += batch) {
    out.push(...(await store.create(tasks.slice(i, i + batch))).map((r) => r.task));
  }
  return out;
}

export async function applyLimits(store: RedisTaskStore, updates: readonly LimitUpdate[]): Promise<void> {
  for (const u of updates) await store.setLimits(u);
}

const TERMINAL = [TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELED, TaskStatus.TIMED_OUT, TaskStatus.SUBMIT_UNKNOWN];

/** Polls stats until `count` tasks are terminal; throws with the last stats after timeoutMs. */
export async function waitTerminal(store: RedisTaskStore, count: number, timeoutMs: number, onTick?: () => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let done = -1;
    let last = '';
    try {
      const s = await store.stats();
      done = TERMINAL.reduce((n, st) => n + s.byStatus[st], 0);
      last = JSON.stringify(s.byStatus);
    } catch (e) {
      last = String(e); // server restarting
    }
    if (done >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${done}/${count} tasks terminal after ${timeoutMs} ms: ${last}`);
    onTick?.();
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function newConnection(url: string): Redis {
  const c = new Redis(url, { maxRetriesPerRequest: null });
  c.on('error', () => undefined);
  return c;
}
