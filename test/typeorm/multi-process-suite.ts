import { PriorityQueue, TaskStatus, TaskTypeRegistry, type SubmitInput, type TaskStore } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { rng } from '../contract/harness';
import type { AuditEvent, ChildConfig } from './fixtures/worker-child';
import { maxOverLimit, rateViolations, WorkerChild, type LimitSpec } from './multi-process-harness';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';

/**
 * Several worker PROCESSES on one real database (PostgreSQL, MariaDB): exactly-once finish,
 * nothing lost, no limit exceeded at any instant (from the audit log of handler starts and
 * finishes), crash recovery after SIGKILL, and a database restart under load. One spec file per
 * database (multi-process-<dialect>.spec.ts), so the two run on two jest workers at once.
 */

const PREFIX = 'mp_';

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs: number, children: WorkerChild[] = []): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${children.map((c) => c.log).join('\n---\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function countStatus(store: TaskStore, status: TaskStatus): Promise<number> {
  return (await store.stats()).byStatus[status] ?? 0;
}

/** Counters of slots in use, straight from the store's resources table. */
async function slotCounters(db: OpenDatabase, queue: string): Promise<Record<string, number>> {
  const rows: Array<{ rkey: string; in_use: unknown }> = await db.dataSource.query(
    db.name === 'postgres'
      ? `SELECT rkey, in_use FROM ${PREFIX}resources WHERE queue = $1 AND in_use <> 0`
      : `SELECT rkey, in_use FROM ${PREFIX}resources WHERE queue = ? AND in_use <> 0`,
    [queue],
  );
  return Object.fromEntries(rows.map((r) => [r.rkey, Number(r.in_use)]));
}

/** Every slot taken was given back (a claim applies the last releases); closes the store. */
async function expectSlotsFreed(db: OpenDatabase, store: TaskStore, queue: string): Promise<void> {
  await store.claimSubmissions({ owner: 'check', limit: 1, leaseMs: 1000 });
  expect(await slotCounters(db, queue)).toEqual({});
  await store.close();
}

function producer(store: TaskStore): PriorityQueue {
  const registry = new TaskTypeRegistry();
  registry.register('noop');
  return new PriorityQueue({ store, registry });
}

export function multiProcessSuite(dialect: DialectName): void {
  jest.setTimeout(180_000);
  describe(`TypeORM store, several worker processes on ${dialect}`, () => {
    let db: OpenDatabase;
    const children: WorkerChild[] = [];

    beforeAll(async () => {
      db = await openDatabase(dialect);
    }, 120_000);

    afterEach(async () => {
      await Promise.all(children.splice(0).map((c) => c.kill()));
    });

    afterAll(async () => {
      await db?.close();
    });

    function spawn(queue: string, events: AuditEvent[], over: Partial<ChildConfig> = {}): WorkerChild {
      const child = new WorkerChild(
        { options: db.options, tablePrefix: PREFIX, queue, concurrency: 16, leaseMs: 30_000, ...over },
        (e) => events.push(e),
      );
      children.push(child);
      return child;
    }

    async function openStore(queue: string): Promise<TypeOrmTaskStore> {
      const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: PREFIX, queue });
      await store.init();
      return store;
    }

    it('4 processes drain 20,000 tasks: each finished exactly once, none lost, no limit exceeded at any instant', async () => {
      const queue = `drain_${dialect}`;
      const store = await openStore(queue);
      const spec: LimitSpec = {
        accountConcurrency: { 'pa/a1': 1, 'pa/a2': 3, 'pa/a3': 3, 'pa/a4': 3, 'pa/a5': 3 },
        tenantQuota: { t1: 2, t2: 4 },
        defaultTenantQuota: 6,
        ckeyLimit: { k4: 3 },
      };
      await store.setLimits({ kind: 'provider', providerKey: 'pa', accountConcurrency: 3 });
      await store.setLimits({ kind: 'account', providerKey: 'pa', accountId: 'a1', concurrency: 1 });
      await store.setLimits({ kind: 'tenant', tenantId: 't1', quota: 2 });
      await store.setLimits({ kind: 'tenant', tenantId: 't2', quota: 4 });
      await store.setLimits({ kind: 'defaultTenant', quota: 6 });
      await store.setLimits({ kind: 'concurrencyKey', key: 'k4', limit: 3 });
      const qps = 1500;
      const burst = 10;
      await store.setLimits({ kind: 'provider', providerKey: 'rated', qps, burst });

      const r = rng(4242);
      const inputs: SubmitInput[] = [];
      for (let i = 0; i < 20_000; i++) {
        const x = r(100);
        const input: SubmitInput = { type: 'noop', priority: r(11) - 5, payload: { i } };
        if (x < 40) Object.assign(input, { providerKey: 'pa', accountId: `a${1 + r(5)}` });
        else if (x < 50) input.providerKey = 'rated';
        else input.providerKey = `free${r(3)}`;
        if (r(2) === 0) input.tenantId = `t${1 + r(5)}`;
        if (r(10) === 0) input.concurrencyKey = `k${1 + r(4)}`;
        inputs.push(input);
      }
      // the constrained lanes must stay small enough to drain in a few seconds
      const a1 = inputs.filter((t) => t.accountId === 'a1').length;
      expect(a1).toBeGreaterThan(100);

      const queueApi = producer(store);
      const events: AuditEvent[] = [];
      const workers = [0, 1, 2, 3].map(() => spawn(queue, events));
      await Promise.all(workers.map((w) => w.ready));
      for (let i = 0; i < inputs.length; i += 2000) await queueApi.submitMany(inputs.slice(i, i + 2000));

      await waitFor('20,000 SUCCEEDED', async () => (await countStatus(store, TaskStatus.SUCCEEDED)) === 20_000, 150_000, workers);
      await Promise.all(workers.map((w) => w.stop()));

      const starts = new Map<string, number>();
      const finishes = new Map<string, number>();
      for (const e of events) (e.e === 's' ? starts : finishes).set(e.id, ((e.e === 's' ? starts : finishes).get(e.id) ?? 0) + 1);
      expect(starts.size).toBe(20_000);
      expect(finishes.size).toBe(20_000);
      expect([...starts.values()].filter((n) => n !== 1)).toEqual([]);
      expect([...finishes.values()].filter((n) => n !== 1)).toEqual([]);
      expect(new Set(events.map((e) => e.pid)).size).toBe(4);
      const stats = await store.stats();
      expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(20_000);
      expect(stats.byStatus[TaskStatus.PENDING_SUBMIT] + stats.byStatus[TaskStatus.SUBMITTING]).toBe(0);

      expect(maxOverLimit(events, spec)).toEqual([]);
      const ratedClaims = events.filter((e) => e.e === 's' && e.provider === 'rated').map((e) => e.claimAt);
      expect(ratedClaims.length).toBeGreaterThan(1000);
      expect(rateViolations(ratedClaims, qps, burst)).toEqual([]);

      await expectSlotsFreed(db, store, queue);
    });

    it('a worker SIGKILLed mid-handler: its task is recovered after the lease, its slots are freed', async () => {
      const queue = `crash_${dialect}`;
      const store = await openStore(queue);
      const queueApi = producer(store);
      const events: AuditEvent[] = [];
      const leaseMs = 1500;
      const victim = spawn(queue, events, { leaseMs, concurrency: 4 });
      await victim.ready;
      // five tasks of one concurrency key (limit 1: one at a time); the first one hangs on its
      // first attempt, so the victim is surely inside its handler when killed
      const tasks = await queueApi.submitMany(
        [0, 1, 2, 3, 4].map((i) => ({
          type: 'noop',
          concurrencyKey: 'only-one',
          tenantId: 'tc',
          priority: 10 - i,
          payload: i === 0 ? { firstAttemptSleepMs: 60_000, sleepMs: 50 } : { sleepMs: 50 },
        })),
      );
      await waitFor('the first task to start in the victim', async () => events.some((e) => e.e === 's' && e.id === tasks[0].id), 20_000, [victim]);
      await victim.kill();
      expect(await slotCounters(db, queue)).toEqual({ 'c:only-one': 1, 't:tc': 1 });

      const survivor = spawn(queue, events, { leaseMs, concurrency: 4 });
      await survivor.ready;
      await waitFor(
        'all five to succeed',
        async () => (await Promise.all(tasks.map((t) => store.get(t.id)))).every((t) => t?.status === TaskStatus.SUCCEEDED),
        60_000,
        [survivor],
      );
      const first = await store.get(tasks[0].id);
      expect(first!.attempts).toBe(1); // back to PENDING_SUBMIT once, after the lease expired
      const startsOfFirst = events.filter((e) => e.e === 's' && e.id === tasks[0].id).map((e) => e.pid);
      expect(startsOfFirst).toEqual([victim.proc.pid, survivor.proc.pid]);
      const bySurvivor = events.filter((e) => e.pid === survivor.proc.pid);
      expect(bySurvivor.filter((e) => e.e === 'f')).toHaveLength(5);
      expect(maxOverLimit(bySurvivor, { accountConcurrency: {}, tenantQuota: {}, defaultTenantQuota: null, ckeyLimit: {} })).toEqual([]);
      await survivor.stop();
      await expectSlotsFreed(db, store, queue);
    });

    it('the database restarts while 4 workers run: they reconnect by themselves and nothing is lost', async () => {
      const queue = `restart_${dialect}`;
      const store = await openStore(queue);
      const queueApi = producer(store);
      const events: AuditEvent[] = [];
      const workers = [0, 1, 2, 3].map(() => spawn(queue, events, { leaseMs: 3000, concurrency: 8 }));
      await Promise.all(workers.map((w) => w.ready));
      const n = 2000;
      const inputs: SubmitInput[] = [];
      for (let i = 0; i < n; i++) inputs.push({ type: 'noop', priority: i % 7, tenantId: `t${i % 3}`, payload: { sleepMs: 2 } });
      await store.setLimits({ kind: 'defaultTenant', quota: 5 });
      const created = await queueApi.submitMany(inputs);
      await waitFor('some progress', async () => new Set(events.filter((e) => e.e === 'f').map((e) => e.id)).size >= 500, 60_000, workers);
      await db.server!.restart();
      await waitFor(`${n} SUCCEEDED after the restart`, async () => (await countStatus(store, TaskStatus.SUCCEEDED)) === n, 120_000, workers);
      const finished = new Set(events.filter((e) => e.e === 'f').map((e) => e.id));
      expect(created.every((t) => finished.has(t.id))).toBe(true);
      expect(workers.every((w) => !w.exited)).toBe(true);
      await Promise.all(workers.map((w) => w.stop()));
      await expectSlotsFreed(db, store, queue);
    });
  });
}
