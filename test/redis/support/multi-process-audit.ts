import { INT32_MAX, TaskStatus, type LimitUpdate, type Task } from '../../../libs/priority-queue/src/core';
import type { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { orderViolations, peakUse, rateViolations, slotLimitOf, type Interval, type RunLimits } from './audit-replay';
import { PRIORITIES, applyLimits, auditDir, createAll, noopTask, pick, seeded, waitTerminal } from './fixtures';
import { readAudit, stopWorkerProcess, type WorkerChild } from './worker-pool';

/**
 * The multi-process audit (DESIGN §2–§4 across processes), on any set of queues: each queue gets
 * the same limits (they hold per queue) and its own random backlog over rate-limited providers,
 * accounts, tenants with small limits and concurrency keys, plus top-priority tasks on a paused
 * provider. Worker processes drain everything; then, per queue, the audit log (store times) is
 * replayed: every task finished exactly once, none lost, no limit exceeded at any instant, no
 * task started while a higher-ranked admissible task waited longer than one claim round, and
 * nothing else was blocked behind the paused provider (no head-of-line blocking) until it resumed.
 * On a store with fair share the created tasks carry their fair tags, so the order replayed is
 * the fair one (core/order-key.ts compareOrder).
 */
export interface AuditQueue {
  store: RedisTaskStore;
  tasks: number;
  /** Of those, top-priority tasks on the provider paused until the rest is done. */
  paused: number;
  seed: number;
  /** Fair-share weights set before the backlog is created (a store with fairness: 'tenant'). */
  weights?: Record<string, number>;
}

const CLAIM_ROUND_SLACK_MS = 25;

export const RATE: RunLimits['rate'] = { pA: { qps: 1500, burst: 4 }, pB: { qps: 900, burst: 2 } };
export const LIMITS: LimitUpdate[] = [
  { kind: 'provider', providerKey: 'pA', qps: 1500, burst: 4, accountConcurrency: 6 },
  { kind: 'provider', providerKey: 'pB', qps: 900, burst: 2, accountConcurrency: 4 },
  { kind: 'provider', providerKey: 'pC', accountConcurrency: 3 },
  { kind: 'account', providerKey: 'pB', accountId: 'a1', concurrency: 1 },
  { kind: 'tenant', tenantId: 't1', quota: 6 },
  { kind: 'tenant', tenantId: 't2', quota: 2 },
  { kind: 'defaultTenant', quota: 8 },
  { kind: 'concurrencyKey', key: 'k2', limit: 2 },
  { kind: 'provider', providerKey: 'pZ', paused: true },
];
const slotLimit = slotLimitOf(LIMITS);

/** Applies the limits and creates the backlog of one queue; returns its tasks by id. */
async function prepare(q: AuditQueue): Promise<Map<string, Task>> {
  await applyLimits(q.store, LIMITS);
  for (const [tenantId, weight] of Object.entries(q.weights ?? {})) await q.store.setLimits({ kind: 'tenantWeight', tenantId, weight });
  const r = seeded(q.seed);
  const inputs = Array.from({ length: q.tasks - q.paused }, () =>
    noopTask({
      priority: PRIORITIES[Math.floor(r() * PRIORITIES.length)],
      providerKey: pick(r, [['pA', 4], ['pB', 3], ['pC', 3]] as const),
      accountId: pick(r, [['a1', 1], ['a2', 4], ['a3', 4], [null, 1]] as const),
      tenantId: pick(r, [['t1', 25], ['t2', 5], ['t3', 33], ['t4', 27], [null, 10]] as const),
      concurrencyKey: pick(r, [[null, 91], ['k1', 3], ['k2', 4], ['k3', 2]] as const),
    }),
  );
  for (let i = 0; i < q.paused; i++) {
    inputs.splice(Math.floor(r() * inputs.length), 0, noopTask({ priority: INT32_MAX, providerKey: 'pZ', tenantId: 't1' }));
  }
  return new Map((await createAll(q.store, inputs)).map((t) => [t.id, t]));
}

/**
 * Runs the audit: prepares every queue, starts the workers (`startWorkers(auditDir)`, which
 * serve every queue), waits, resumes the paused provider, waits, stops them and checks.
 */
export async function runMultiProcessAudit(queues: readonly AuditQueue[], startWorkers: (dir: string) => Promise<WorkerChild[]>): Promise<void> {
  const byId = await Promise.all(queues.map(prepare));
  const workers = await startWorkers(auditDir());
  const pausedUntil: number[] = [];
  const resumedAt: number[] = [];
  await Promise.all(
    queues.map(async (q, i) => {
      await waitTerminal(q.store, q.tasks - q.paused, 150_000);
      const waiting = await q.store.stats();
      expect(waiting.byStatus[TaskStatus.PENDING_SUBMIT]).toBe(q.paused);
      expect(waiting.pending).toEqual([expect.objectContaining({ priority: INT32_MAX, count: q.paused })]);
      pausedUntil[i] = await q.store.now();
      await q.store.setLimits({ kind: 'provider', providerKey: 'pZ', paused: false });
      resumedAt[i] = await q.store.now();
      await waitTerminal(q.store, q.tasks, 60_000);
    }),
  );
  await Promise.all(workers.map((w) => stopWorkerProcess(w)));
  const audit = readAudit(workers.map((w) => w.auditPath));

  for (const [i, q] of queues.entries()) {
    // the store: all succeeded, no slot left in use
    const stats = await q.store.stats();
    expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(q.tasks);
    expect(stats.inFlightByProvider).toEqual({});
    expect(stats.inFlightByAccount).toEqual([]);
    expect(stats.inFlightByTenant).toEqual({});
    expect(stats.inFlightByConcurrencyKey).toEqual({});

    // the audit: one start and one finish per task, by workers of several processes
    const mine = audit.filter((a) => byId[i].has(a.id));
    const starts = new Map<string, number[]>();
    const finishes = new Map<string, number[]>();
    for (const a of mine) {
      if (a.kind === 'S') starts.set(a.id, [...(starts.get(a.id) ?? []), a.time]);
      if (a.kind === 'F') {
        expect(a.status).toBe(TaskStatus.SUCCEEDED);
        finishes.set(a.id, [...(finishes.get(a.id) ?? []), a.time]);
      }
    }
    expect(starts.size).toBe(q.tasks);
    expect(finishes.size).toBe(q.tasks);
    expect([...starts.values()].filter((s) => s.length !== 1)).toEqual([]);
    expect([...finishes.values()].filter((s) => s.length !== 1)).toEqual([]);
    expect(new Set(mine.filter((a) => a.kind === 'S').map((a) => a.worker)).size).toBe(workers.length);

    const intervals: Interval[] = [...starts.entries()].map(([id, [start]]) => ({
      task: byId[i].get(id)!,
      start,
      finish: finishes.get(id)![0],
    }));
    expect(intervals.every((iv) => iv.task && iv.finish >= iv.start)).toBe(true);
    // a queue with fair share: every task has its tag, so the order replayed below is the fair one
    expect(intervals.every((iv) => (iv.task.fairTag !== null) === (q.store.fairness !== null))).toBe(true);

    // no limit exceeded at any instant (and the limits were really reached)
    const peaks = peakUse(intervals);
    const over = [...peaks].filter(([res, peak]) => peak > (slotLimit(res) ?? Infinity));
    expect(over).toEqual([]);
    expect(peaks.get('t:t2')).toBe(2);
    expect(peaks.get('a:pB:a1')).toBe(1);
    const startsByProvider = new Map<string, number[]>();
    for (const iv of intervals) startsByProvider.set(iv.task.providerKey, [...(startsByProvider.get(iv.task.providerKey) ?? []), iv.start]);
    expect(rateViolations(startsByProvider, RATE)).toEqual([]);
    expect(intervals.filter((iv) => iv.task.providerKey === 'pZ' && iv.start < pausedUntil[i])).toEqual([]);

    // order: no higher-ranked admissible task waited longer than a claim round
    expect(orderViolations(intervals, { rate: RATE, slotLimit, pausedUntil: { pZ: resumedAt[i] } }, CLAIM_ROUND_SLACK_MS)).toEqual([]);
  }
}
