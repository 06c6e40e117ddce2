import { DataSource } from 'typeorm';
import { fenceOf, TaskStatus, type NewTask } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { dataSourceOptions, openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped. ~5 s (20,000 rows copied in one statement).
jest.setTimeout(120_000);

/**
 * The PostgreSQL claim and complete read live rows only, whatever else the table holds (the
 * bench's "1k pending + 1M finished rows" row): on a table of FINISHED finished rows, seeded and
 * ANALYZEd before the pending tasks are written as the backlog scenario does, every statement
 * the claim function runs (alone, and inside complete_and_claim with complete_leased's) is
 * planned without parallel workers and without a sequential scan of the tasks table, and no plan
 * node reads or filters out more rows than a claim of LIMIT could need.
 *
 * The plans come from auto_explain (ANALYZE, nested statements) on the store's one pooled
 * connection, whose parallel costs are set to zero: the planner then gives workers to any
 * statement it estimates large, so a statement that a table of a million rows would send to
 * workers shows it here on 20,000 (a generic plan estimated the boost probe's range at a third
 * of the table: two workers launched per claim, 15 ms each, on an empty index). Shapes, not
 * times: deterministic.
 */
const FINISHED = 20_000;
const PENDING = 300;
const LIMIT = 32;
const PREFIX = 'pl_';
/** Rows a node may touch: a claim's batch and the lanes' next heads, with room, far below FINISHED. */
const MAX_ROWS = 1_000;

const task = (i: number): NewTask => ({
  id: `p${i}`,
  idempotencyKey: null,
  type: 'job',
  payload: { i },
  priority: i % 10,
  providerKey: `prov${i % 3}`,
  accountId: i % 2 === 0 ? `a${i % 5}` : null,
  tenantId: i % 3 === 0 ? `t${i % 4}` : null,
  concurrencyKey: null,
  delayMs: 0,
  timeoutMs: null,
  maxAttempts: 3,
  idempotent: true,
});

describe('TypeORM store on PostgreSQL: claim, complete and purge plans on a table of finished rows', () => {
  let db: OpenDatabase;
  let ds: DataSource;
  const plans: string[] = [];

  beforeAll(async () => {
    db = await openDatabase('postgres');
    // one connection: the session settings below are those of every statement the store sends
    ds = new DataSource({ ...(dataSourceOptions('postgres', db.server!) as object), extra: { max: 1 } } as never);
    await ds.initialize();
  });

  afterAll(async () => {
    await ds?.destroy().catch(() => undefined);
    await db?.close();
  });

  /**
   * Runs fn with auto_explain on and returns the plans of the statements it ran, nested ones
   * included: those that read the tasks table (`all`: every one).
   */
  async function explained(fn: () => Promise<void>, all = false): Promise<string[]> {
    const qr = ds.createQueryRunner();
    const client = (await qr.connect()) as { on(e: 'notice', f: (m: { message?: string }) => void): void; removeAllListeners(e: string): void };
    for (const s of [
      "LOAD 'auto_explain'",
      'SET auto_explain.log_min_duration = 0',
      'SET auto_explain.log_analyze = on',
      'SET auto_explain.log_nested_statements = on',
      'SET parallel_setup_cost = 0',
      'SET parallel_tuple_cost = 0',
      'SET min_parallel_table_scan_size = 0',
      'SET min_parallel_index_scan_size = 0',
      'SET client_min_messages = log',
    ]) await qr.query(s);
    const got: string[] = [];
    client.on('notice', (m) => got.push(String(m.message ?? '')));
    await qr.release();
    try {
      await fn();
    } finally {
      client.removeAllListeners('notice');
      await ds.query('RESET ALL');
    }
    plans.push(...got);
    return all ? got : got.filter((p) => p.includes(`${PREFIX}tasks`));
  }

  function offenders(plan: string): string[] {
    const out: string[] = [];
    if (/Gather|Parallel/.test(plan)) out.push('parallel workers');
    if (new RegExp(`Seq Scan on ${PREFIX}tasks\\b`).test(plan)) out.push('sequential scan of the tasks table');
    for (const m of plan.matchAll(/actual time=[0-9.]+\.\.[0-9.]+ rows=(\d+) loops=(\d+)/g)) {
      if (Number(m[1]) * Number(m[2]) > MAX_ROWS) out.push(`a node of ${Number(m[1]) * Number(m[2])} rows`);
    }
    for (const m of plan.matchAll(/Rows Removed by (?:Filter|Index Recheck): (\d+)/g)) {
      if (Number(m[1]) > MAX_ROWS) out.push(`${m[1]} rows filtered out`);
    }
    return out;
  }

  /** Inserts `count` copies of row `template` (ids from `idSql` over g = 1..count), with `set` overriding columns. */
  async function copyRows(template: string, idSql: string, count: number, set: Record<string, string> = {}): Promise<void> {
    const columns: Array<{ column_name: string; column_default: string | null }> = await ds.query(
      `SELECT column_name, column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
      [`${PREFIX}tasks`],
    );
    const copied = columns.filter((c) => c.column_name !== 'id' && !(c.column_default ?? '').startsWith('nextval('));
    await ds.query(
      `INSERT INTO ${PREFIX}tasks (id, ${copied.map((c) => `"${c.column_name}"`).join(', ')})
       SELECT ${idSql}, ${copied.map((c) => set[c.column_name] ?? `t."${c.column_name}"`).join(', ')}
       FROM ${PREFIX}tasks t, generate_series(1, ${count}) g WHERE t.id = $1`,
      [template],
    );
  }

  it('claims and completes through index reads of live rows only', async () => {
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue: 'plans' });
    await store.init();
    // the finished rows: one real task finished, then copied (as the bench's seed does)
    await store.create([task(-1)]);
    const first = await store.claimSubmissions({ owner: 'seed', limit: 1, leaseMs: 60_000 });
    await store.complete(fenceOf(first.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
    await copyRows('p-1', `'done-' || g`, FINISHED);
    await ds.query(`ANALYZE ${PREFIX}tasks`);
    for (let i = 0; i < PENDING; i += 100) await store.create(Array.from({ length: 100 }, (_, k) => task(i + k)));

    const claimPlans = await explained(async () => {
      const c = await store.claimSubmissions({ owner: 'w', limit: LIMIT, leaseMs: 60_000 });
      expect(c.claimed).toHaveLength(LIMIT);
      const next = await store.completeAndClaim!(
        c.claimed.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: null } })),
        { owner: 'w', limit: LIMIT, leaseMs: 60_000 },
      );
      expect(next.completed.map((a) => a.error?.message ?? a.task?.status)).toEqual(c.claimed.map(() => TaskStatus.SUCCEEDED));
      expect(next.claim.claimed).toHaveLength(LIMIT);
      for (const t of next.claim.claimed) await store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED, result: null });
    });
    // the claim's lane read, the complete's UPDATE: the statements that touch tasks were seen
    expect(claimPlans.some((p) => p.includes('SUBMITTING'))).toBe(true);
    expect(claimPlans.some((p) => p.includes('complete_leased') || p.includes('lease_id = i.lease_id'))).toBe(true);
    const bad = claimPlans.map((p) => ({ p, why: offenders(p) })).filter((x) => x.why.length > 0);
    expect(bad.map((x) => `${x.why.join(', ')}:\n${x.p}`)).toEqual([]);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${PREFIX}tasks WHERE status = 'SUCCEEDED'`);
    expect(n).toBe(FINISHED + 1 + 2 * LIMIT);
  });

  it('with fair share, due boosts, past deadlines, freed slots and several lanes: every step of the claim reads live rows only', async () => {
    // the claim's other steps run on the same table of finished rows (seeded here when this test
    // runs alone): boosts fire (step 0), tasks time out (1), completes free tenant slots (2),
    // lanes take turns under a tenant quota (5) and V[p] advances over the claimed tasks (7)
    let now = 1_000_000;
    const clock = { now: () => now };
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue: 'fair', fairness: 'tenant', clock });
    await store.init();
    const [{ n: seeded }] = await ds.query(`SELECT count(*)::int AS n FROM ${PREFIX}tasks WHERE status = 'SUCCEEDED'`);
    if (seeded < FINISHED) {
      await store.create([{ ...task(-3), id: 'f-1' }]);
      const first = await store.claimSubmissions({ owner: 'seed', limit: 1, leaseMs: 60_000 });
      await store.complete(fenceOf(first.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
      await copyRows('f-1', `'fdone-' || g`, FINISHED);
      await ds.query(`ANALYZE ${PREFIX}tasks`);
    }
    await store.setLimits({ kind: 'tenant', tenantId: 't0', quota: 3 });
    for (let i = 0; i < PENDING; i += 100) {
      await store.create(
        Array.from({ length: 100 }, (_, k) => {
          const j = i + k;
          const t = { ...task(j), id: `f${j}`, tenantId: `t${j % 4}` };
          if (j % 10 === 1) return { ...t, timeoutMs: 5_000, boost: { beforeDeadlineMs: 4_000, priority: 20 } };
          if (j % 10 === 2) return { ...t, timeoutMs: 500 };
          return t;
        }),
      );
    }
    const held = await store.claimSubmissions({ owner: 'w', limit: LIMIT, leaseMs: 60_000 });
    expect(held.claimed.length).toBe(LIMIT);
    now += 2_000; // every boost due, every 500 ms deadline passed
    const seen = await explained(async () => {
      const next = await store.completeAndClaim!(
        held.claimed.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: null } })),
        { owner: 'w', limit: LIMIT, leaseMs: 60_000 },
      );
      expect(next.completed.map((a) => a.task?.status)).toEqual(held.claimed.map(() => TaskStatus.SUCCEEDED));
      expect(next.claim.boosted?.length).toBeGreaterThan(0);
      expect(next.claim.timedOut.length).toBeGreaterThan(0);
      expect(next.claim.claimed).toHaveLength(LIMIT);
      // the boosted tasks (priority 20) first, each tenant t0 within its quota of 3
      expect(next.claim.claimed[0].priority).toBe(20);
      expect(next.claim.claimed.filter((t) => t.tenantId === 't0').length).toBeLessThanOrEqual(3);
    }, true);
    const steps: Array<[string, RegExp]> = [
      ['boosts', /boost_due = NULL/],
      ['timeouts', /TIMED_OUT/],
      ['releases', new RegExp(`Delete on ${PREFIX}releases`)],
      ['lane claim', /SUBMITTING/],
      ['fair levels', new RegExp(`Insert on ${PREFIX}fair_levels`)],
    ];
    for (const [name, re] of steps) expect([name, seen.some((p) => re.test(p))]).toEqual([name, true]);
    const bad = seen.map((p) => ({ p, why: offenders(p) })).filter((x) => x.why.length > 0);
    expect(bad.map((x) => `${x.why.join(', ')}:\n${x.p}`)).toEqual([]);
  });

  it('purges the oldest finished tasks across types and statuses through index reads of them only', async () => {
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue: 'purge' });
    await store.init();
    await store.create([{ ...task(-2), id: 'q-1' }]);
    const first = await store.claimSubmissions({ owner: 'seed', limit: 1, leaseMs: 60_000 });
    await store.complete(fenceOf(first.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
    // 6 types x 3 terminal statuses, finished_at spread over 0..9,999 (g * 7919 mod 10,007: each
    // group interleaved with the others), plus live rows that carry a finished_at (never purged)
    const ROWS = 3_000;
    await copyRows('q-1', `'old-' || g`, ROWS, {
      type: `'type' || (g % 6)`,
      status: `(ARRAY['SUCCEEDED', 'FAILED', 'CANCELED'])[1 + (g / 6) % 3]`,
      finished_at: `(g * 7919) % 10007`,
    });
    await copyRows('q-1', `'live-' || g`, 50, { status: `'RUNNING'`, finished_at: `g`, type: `'type' || (g % 6)` });
    await ds.query(`ANALYZE ${PREFIX}tasks`);
    const cutoff = 5_000;
    const due: Array<{ id: string }> = await ds.query(
      `SELECT id FROM ${PREFIX}tasks WHERE queue = 'purge' AND status IN ('SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN')
         AND finished_at <= $1 ORDER BY finished_at, seq`,
      [cutoff],
    );
    expect(due.length).toBeGreaterThan(1_000);
    const others = async () => (await ds.query(`SELECT count(*)::int AS m FROM ${PREFIX}tasks WHERE queue <> 'purge'`))[0].m as number;
    const othersBefore = await others();
    const left = async () => new Set((await ds.query(`SELECT id FROM ${PREFIX}tasks WHERE queue = 'purge'`)).map((r: { id: string }) => r.id as string));
    const before = await left();
    const purgePlans = await explained(async () => {
      expect(await store.purge(cutoff, 20)).toBe(20);
    });
    // oldest first over the whole queue, whatever the group
    const after = await left();
    expect([...before].filter((id) => !after.has(id)).sort()).toEqual(due.slice(0, 20).map((r) => r.id).sort());
    // planned as index reads of the groups and the rows taken only
    expect(purgePlans.length).toBeGreaterThan(0);
    const bad = purgePlans.map((p) => ({ p, why: offenders(p) })).filter((x) => x.why.length > 0);
    expect(bad.map((x) => `${x.why.join(', ')}:\n${x.p}`)).toEqual([]);
    // then the rest, in batches: every terminal row due goes, nothing else
    let n = 20;
    for (let k = 0; k < 100; k++) {
      const got = await store.purge(cutoff, 500);
      n += got;
      if (got < 500) break;
    }
    expect(n).toBe(due.length);
    const rest = await left();
    expect(rest.size).toBe(before.size - due.length);
    for (const r of due) expect(rest.has(r.id)).toBe(false);
    for (let g = 1; g <= 50; g++) expect(rest.has(`live-${g}`)).toBe(true);
    // the other queue's finished rows stay
    expect(await others()).toBe(othersBefore);
  });
});
