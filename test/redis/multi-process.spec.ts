import { join } from 'node:path';
import { INT32_MAX, TaskStatus, type LimitUpdate, type Task } from '../../libs/priority-queue/src/core';
import { orderViolations, peakUse, rateViolations, type Interval, type RunLimits } from './support/audit-replay';
import { PRIORITIES, applyLimits, auditDir, createAll, noopTask, pick, seeded, waitTerminal } from './support/fixtures';
import { readAudit, startWorkerProcess, stopWorkerProcess } from './support/worker-pool';
import { useRedisWorkerEnv } from './support/redis-worker-env';

/**
 * DESIGN §2–§4 across processes: 4 worker processes (core Worker + RedisTaskStore) drain 20,000
 * no-op tasks over rate-limited providers, accounts, tenants with small limits and concurrency
 * keys. The audit log (store times) is replayed: every task finished exactly once, none lost, no
 * limit exceeded at any instant, and no task started while a higher-ranked admissible task
 * waited longer than one claim round. The top-priority tasks sit on a paused provider until
 * everything else is done (no head-of-line blocking), then drain once it resumes.
 */
const TASKS = 20_000;
/** Tasks of the top priority on a provider paused until the rest is done: a store with
 * head-of-line blocking would never start anything else. */
const PAUSED_TASKS = 300;
const WORKERS = 4;
const CLAIM_ROUND_SLACK_MS = 25;

const RATE: RunLimits['rate'] = { pA: { qps: 1500, burst: 4 }, pB: { qps: 900, burst: 2 } };
const LIMITS: LimitUpdate[] = [
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
const slotLimit = (r: string): number | null => {
  const [kind, a, b] = r.split(':');
  if (kind === 'a') return a === 'pB' && b === 'a1' ? 1 : ({ pA: 6, pB: 4, pC: 3 } as Record<string, number>)[a];
  if (kind === 't') return ({ t1: 6, t2: 2 } as Record<string, number>)[a] ?? 8;
  if (kind === 'c') return a === 'k2' ? 2 : 1;
  return null;
};

describe('Redis store: 4 worker processes, 20,000 tasks, audit replay', () => {
  const env = useRedisWorkerEnv('mp');

  it('finishes every task exactly once within every limit and in order', async () => {
    const { server, store, workers } = env;
    await applyLimits(store, LIMITS);
    const r = seeded(20240601);
    const inputs = Array.from({ length: TASKS - PAUSED_TASKS }, () =>
      noopTask({
        priority: PRIORITIES[Math.floor(r() * PRIORITIES.length)],
        providerKey: pick(r, [['pA', 4], ['pB', 3], ['pC', 3]] as const),
        accountId: pick(r, [['a1', 1], ['a2', 4], ['a3', 4], [null, 1]] as const),
        tenantId: pick(r, [['t1', 25], ['t2', 5], ['t3', 33], ['t4', 27], [null, 10]] as const),
        concurrencyKey: pick(r, [[null, 91], ['k1', 3], ['k2', 4], ['k3', 2]] as const),
      }),
    );
    for (let i = 0; i < PAUSED_TASKS; i++) {
      inputs.splice(Math.floor(r() * inputs.length), 0, noopTask({ priority: INT32_MAX, providerKey: 'pZ', tenantId: 't1' }));
    }
    const created = await createAll(store, inputs);
    const byId = new Map<string, Task>(created.map((t) => [t.id, t]));

    const dir = auditDir();
    workers.push(
      ...(await Promise.all(
        Array.from({ length: WORKERS }, (_, i) =>
          startWorkerProcess({
            url: server.url,
            prefix: 'mp',
            auditPath: join(dir, `worker-${i}.log`),
            leaseMs: 20_000,
            concurrency: 16,
            handlerMs: 0,
          }),
        ),
      )),
    );
    await waitTerminal(store, TASKS - PAUSED_TASKS, 150_000);
    const waiting = await store.stats();
    expect(waiting.byStatus[TaskStatus.PENDING_SUBMIT]).toBe(PAUSED_TASKS);
    expect(waiting.pending).toEqual([expect.objectContaining({ priority: INT32_MAX, count: PAUSED_TASKS })]);
    const pausedUntil = await store.now();
    await store.setLimits({ kind: 'provider', providerKey: 'pZ', paused: false });
    const resumedAt = await store.now();
    await waitTerminal(store, TASKS, 60_000);
    await Promise.all(workers.map((w) => stopWorkerProcess(w)));

    // the store: all succeeded, no slot left in use
    const stats = await store.stats();
    expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(TASKS);
    expect(stats.inFlightByProvider).toEqual({});
    expect(stats.inFlightByAccount).toEqual([]);
    expect(stats.inFlightByTenant).toEqual({});
    expect(stats.inFlightByConcurrencyKey).toEqual({});

    // the audit: one start and one finish per task, by workers of several processes
    const audit = readAudit(workers.map((w) => w.auditPath));
    const starts = new Map<string, number[]>();
    const finishes = new Map<string, number[]>();
    for (const a of audit) {
      if (a.kind === 'S') starts.set(a.id, [...(starts.get(a.id) ?? []), a.time]);
      if (a.kind === 'F') {
        expect(a.status).toBe(TaskStatus.SUCCEEDED);
        finishes.set(a.id, [...(finishes.get(a.id) ?? []), a.time]);
      }
    }
    expect(starts.size).toBe(TASKS);
    expect(finishes.size).toBe(TASKS);
    expect([...starts.values()].filter((s) => s.length !== 1)).toEqual([]);
    expect([...finishes.values()].filter((s) => s.length !== 1)).toEqual([]);
    expect(new Set(audit.filter((a) => a.kind === 'S').map((a) => a.worker)).size).toBe(WORKERS);

    const intervals: Interval[] = [...starts.entries()].map(([id, [start]]) => ({
      task: byId.get(id)!,
      start,
      finish: finishes.get(id)![0],
    }));
    expect(intervals.every((iv) => iv.task && iv.finish >= iv.start)).toBe(true);

    // no limit exceeded at any instant (and the limits were really reached)
    const peaks = peakUse(intervals);
    const over = [...peaks].filter(([res, peak]) => peak > (slotLimit(res) ?? Infinity));
    expect(over).toEqual([]);
    expect(peaks.get('t:t2')).toBe(2);
    expect(peaks.get('a:pB:a1')).toBe(1);
    const startsByProvider = new Map<string, number[]>();
    for (const iv of intervals) startsByProvider.set(iv.task.providerKey, [...(startsByProvider.get(iv.task.providerKey) ?? []), iv.start]);
    expect(rateViolations(startsByProvider, RATE)).toEqual([]);
    expect(intervals.filter((iv) => iv.task.providerKey === 'pZ' && iv.start < pausedUntil)).toEqual([]);

    // order: no higher-ranked admissible task waited longer than a claim round
    expect(orderViolations(intervals, { rate: RATE, slotLimit, pausedUntil: { pZ: resumedAt } }, CLAIM_ROUND_SLACK_MS)).toEqual([]);
  }, 240_000);
});
