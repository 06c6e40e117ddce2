import { DataSource } from 'typeorm';
import { FairTagOverflowError, fenceOf, InvalidStateError, TaskStatus, type NewTask, type Task } from '../../libs/priority-queue/src/core';
import { FAIR_QUANTUM } from '../../libs/priority-queue/src/core/fairness';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { rng } from '../contract/harness';
import { dataSourceOptions, openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped.
jest.setTimeout(180_000);

/**
 * DESIGN §7 fair share on PostgreSQL across connections and processes' worth of pools: the fair
 * tag of a create comes from `<prefix>fair_tag()` (schema/postgres/1-fair-tags.sql), whose upsert
 * on `<prefix>fair_tags` serialises creates of one tenant and level on that row without the queue
 * lock. Several DataSources (separate pools, as separate processes would have) create at once
 * for the same tenants and levels, also while others claim, complete, change priorities and
 * fire deadline boosts: no tag is given twice at a tenant and level, no F update is lost, and a
 * tenant's tags at a level rise in creation order.
 */
const PREFIX = 'pf_';
const POOLS = 4;
const TENANTS = ['t0', 't1', 't2', 't3', null] as const;
const WEIGHTS: Record<string, number> = { t1: 3, t2: 1000, t3: 7 };
const LEVELS = [0, 1, 5];

function inc(tenant: string | null): bigint {
  return BigInt(Math.floor(FAIR_QUANTUM / (tenant === null ? 1 : (WEIGHTS[tenant] ?? 1))));
}

const groupOf = (tenant: string | null, priority: number) => `${tenant ?? ''}\u001f${priority}`;

describe('TypeORM store on PostgreSQL: fair tags under concurrent creates (fair_tag upsert)', () => {
  let db: OpenDatabase;
  const pools: DataSource[] = [];
  let n = 0;

  beforeAll(async () => {
    db = await openDatabase('postgres');
    for (let i = 0; i < POOLS; i++) {
      const ds = new DataSource({ ...(dataSourceOptions('postgres', db.server!) as object), extra: { max: 4 } } as never);
      await ds.initialize();
      pools.push(ds);
    }
  });

  afterAll(async () => {
    for (const ds of pools) await ds.destroy().catch(() => undefined);
    await db?.close();
  });

  /** One store per pool on one new fair queue (weights set through the first). */
  async function openStores(): Promise<TypeOrmTaskStore[]> {
    const queue = `fq${++n}`;
    const stores = pools.map((dataSource) => new TypeOrmTaskStore({ dataSource, tablePrefix: PREFIX, queue, fairness: 'tenant' }));
    for (const s of stores) await s.init();
    for (const [tenantId, weight] of Object.entries(WEIGHTS)) await stores[0].setLimits({ kind: 'tenantWeight', tenantId, weight });
    return stores;
  }

  let ids = 0;
  function newTask(r: (n: number) => number, over: Partial<NewTask> = {}): NewTask {
    return {
      id: `f${++ids}`, idempotencyKey: null, type: 't', payload: null, priority: LEVELS[r(LEVELS.length)], providerKey: `p${r(3)}`,
      accountId: null, tenantId: TENANTS[r(TENANTS.length)], concurrencyKey: null, delayMs: 0, timeoutMs: null,
      maxAttempts: 1, idempotent: true, ...over,
    };
  }

  async function fairRows(queue: string, table: 'fair_tags' | 'fair_levels'): Promise<Array<Record<string, string>>> {
    return db.dataSource.query(`SELECT * FROM ${PREFIX}${table} WHERE queue = $1`, [queue]);
  }

  /** Producers: `perPool` concurrent loops on each pool, each `creates` batches of 1..8 tasks. */
  async function produce(
    stores: TypeOrmTaskStore[],
    seed: number,
    perPool: number,
    creates: number,
    over: (r: (n: number) => number) => Partial<NewTask> = () => ({}),
    made: Task[] = [],
  ): Promise<Task[]> {
    await Promise.all(
      stores.flatMap((store, s) =>
        Array.from({ length: perPool }, async (_, k) => {
          const r = rng(seed * 1000 + s * 100 + k);
          for (let i = 0; i < creates; i++) {
            const batch = Array.from({ length: 1 + r(8) }, () => newTask(r, over(r)));
            for (const c of await store.create(batch)) made.push(c.task);
          }
        }),
      ),
    );
    return made;
  }

  it('creates from four pools at once: each tenant and level gets exactly 1..n increments, in creation order; F = the last', async () => {
    const stores = await openStores();
    const made = await produce(stores, 1, 3, 25);
    expect(made.length).toBeGreaterThan(800);
    const groups = new Map<string, Task[]>();
    for (const t of made) {
      const g = groupOf(t.tenantId, t.priority);
      groups.set(g, [...(groups.get(g) ?? []), t]);
    }
    expect(groups.size).toBe(TENANTS.length * LEVELS.length);
    // no claim ran: V = 0, so the tags of a group are exactly 1..n increments, and by seq
    for (const tasks of groups.values()) {
      const d = inc(tasks[0].tenantId);
      const bySeq = [...tasks].sort((a, b) => a.seq - b.seq).map((t) => BigInt(t.fairTag!));
      expect(bySeq).toEqual(bySeq.map((_, i) => d * BigInt(i + 1)));
    }
    const f = await fairRows(stores[0].queue, 'fair_tags');
    expect(new Map(f.map((r) => [groupOf(r.tenant_key === '' ? null : r.tenant_key, Number(r.priority)), BigInt(r.finish)]))).toEqual(
      new Map([...groups].map(([g, tasks]) => [g, inc(tasks[0].tenantId) * BigInt(tasks.length)])),
    );
    // what create returned is what the store keeps
    const stored = await Promise.all(made.filter((_, i) => i % 17 === 0).map((t) => stores[1].get(t.id)));
    expect(stored.map((t) => t!.fairTag)).toEqual(made.filter((_, i) => i % 17 === 0).map((t) => t.fairTag));
    for (const s of stores) await s.close();
  });

  it('creates racing claims, completes, priority changes and deadline boosts on other pools: tags stay unique per tenant and level, V[p] = the largest claimed tag', async () => {
    const stores = await openStores();
    const queue = stores[0].queue;
    const claimed = new Map<string, Task>();
    const moved = new Set<string>();
    const made: Task[] = [];
    let producing = true;
    const claimers = stores.map(async (store, s) => {
      const r = rng(77 + s);
      while (producing || (await store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]) {
        const claim = await store.claimSubmissions({ owner: `w${s}`, limit: 1 + r(6), leaseMs: 60_000 });
        for (const b of claim.boosted ?? []) moved.add(b.task.id);
        for (const t of claim.claimed) {
          expect(claimed.has(t.id)).toBe(false);
          claimed.set(t.id, t);
          await store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED });
        }
        if (claim.claimed.length > 0 && r(3) === 0) {
          // a priority change on some pending task (its re-tag races the creates)
          const p = made.length > 0 ? await store.get(made[r(made.length)].id) : null;
          if (p?.status === TaskStatus.PENDING_SUBMIT) {
            const to = LEVELS[r(LEVELS.length)];
            try {
              await store.changePriority(p.id, to);
              if (to !== p.priority) moved.add(p.id);
            } catch (e) {
              if (!(e instanceof InvalidStateError)) throw e; // claimed meanwhile
            }
          }
        }
      }
    });
    // a quarter of the tasks carry a boost to level 5 due 1 ms to 40 ms after their create
    await produce(stores, 2, 2, 25, (r) => (r(4) === 0 ? { timeoutMs: 600_000, boost: { beforeDeadlineMs: 600_000 - 1 - r(40), priority: 5 } } : {}), made);
    producing = false;
    await Promise.all(claimers);
    expect(claimed.size).toBe(made.length);

    // every task's tag at its final level: unique per tenant and level
    const final = await Promise.all(made.map((t) => stores[0].get(t.id)));
    const groups = new Map<string, Task[]>();
    for (const t of final) groups.set(groupOf(t!.tenantId, t!.priority), [...(groups.get(groupOf(t!.tenantId, t!.priority)) ?? []), t!]);
    for (const tasks of groups.values()) expect(new Set(tasks.map((t) => t.fairTag)).size).toBe(tasks.length);
    // a tenant's tasks created at a level and never moved: tags rise in creation order
    for (const tasks of groups.values()) {
      const kept = tasks.filter((t) => !moved.has(t.id)).sort((a, b) => a.seq - b.seq).map((t) => BigInt(t.fairTag!));
      expect(kept).toEqual([...kept].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    // F[t,p] is at least every tag given at (t, p); V[p] is the largest tag claimed at p
    const f = new Map((await fairRows(queue, 'fair_tags')).map((r) => [groupOf(r.tenant_key === '' ? null : r.tenant_key, Number(r.priority)), BigInt(r.finish)]));
    for (const [g, tasks] of groups) for (const t of tasks) expect(BigInt(t.fairTag!) <= f.get(g)!).toBe(true);
    const v = new Map((await fairRows(queue, 'fair_levels')).map((r) => [Number(r.priority), BigInt(r.vtime)]));
    const maxClaimed = new Map<number, bigint>();
    for (const t of claimed.values()) {
      const tag = BigInt(t.fairTag!);
      if (tag > (maxClaimed.get(t.priority) ?? 0n)) maxClaimed.set(t.priority, tag);
    }
    expect(v).toEqual(maxClaimed);
    expect(moved.size).toBeGreaterThan(0);
    for (const s of stores) await s.close();
  });

  it('a create whose tag would pass 2^63 - 1 fails with FairTagOverflowError and writes nothing', async () => {
    const [store, ...rest] = await openStores();
    const r = rng(5);
    await store.create([newTask(r, { tenantId: 't0', priority: 0 })]);
    await db.dataSource.query(`UPDATE ${PREFIX}fair_tags SET finish = 9223372036854775807 - 1500000 WHERE queue = $1 AND tenant_key = 't0' AND priority = 0`, [store.queue]);
    await expect(store.create([newTask(r, { tenantId: 't1', priority: 0 }), newTask(r, { tenantId: 't0', priority: 0 }), newTask(r, { tenantId: 't0', priority: 0 })])).rejects.toBeInstanceOf(
      FairTagOverflowError,
    );
    expect((await store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(1);
    expect((await fairRows(store.queue, 'fair_tags')).map((x) => [x.tenant_key, x.finish])).toEqual([['t0', String(9223372036854775807n - 1500000n)]]);
    const [last] = await store.create([newTask(r, { tenantId: 't0', priority: 0 })]);
    expect(last.task.fairTag).toBe(String(9223372036854775807n - 500000n));
    for (const s of [store, ...rest]) await s.close();
  });
});
