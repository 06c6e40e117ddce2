import {
  compareOrder,
  fenceOf,
  PriorityQueue,
  TaskStatus,
  TaskTypeRegistry,
  ValidationError,
  type Task,
  type TaskQuery,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, shuffle, type Harness } from '../harness';

/** Every page of a query, following nextCursor to the end; the page sizes too. */
async function allPages(h: Harness, q: Omit<TaskQuery, 'cursor'>): Promise<{ tasks: Task[]; pages: number }> {
  const tasks: Task[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await h.store.query({ ...q, cursor });
    expect(page.tasks.length).toBeLessThanOrEqual(q.limit);
    tasks.push(...page.tasks);
    cursor = page.nextCursor;
    pages++;
    if (pages > 10_000) throw new Error('query does not end');
  } while (cursor !== null);
  return { tasks, pages };
}

/** The listed order at store time `now` (core/task-query.ts), as the reference. */
function listed(tasks: readonly Task[], status: TaskStatus, now: number, aging = 0): string[] {
  const sorted = [...tasks].sort((a, b) => {
    if (status !== TaskStatus.PENDING_SUBMIT) return b.seq - a.seq;
    const da = a.runAt <= now;
    if (da !== b.runAt <= now) return da ? -1 : 1;
    if (da) return compareOrder(a, b, aging);
    return a.runAt - b.runAt || a.seq - b.seq;
  });
  return ids(sorted);
}

export function queryCases(ctx: ContractContext): void {
  it('PENDING_SUBMIT in claim order (due by DESIGN §2, then not yet due by runAt), paged to the end; tasks as get() returns them', async () => {
    const h = await ctx.open();
    const r = rng(77);
    const specs = Array.from({ length: 57 }, (_, i) => ({
      priority: [0, 5, -5, 2147483647, -2147483648][r(5)],
      delayMs: [0, 0, 0, 300, 300, 5000][r(6)],
      providerKey: `p${r(3)}`,
      tenantId: r(2) ? `t${r(3)}` : null,
      payload: { i },
    }));
    await h.store.create(shuffle(specs, r).slice(0, 30).map((s) => h.newTask(s)));
    h.clock.advance(100);
    await h.store.create(shuffle(specs, r).slice(0, 27).map((s) => h.newTask(s)));
    h.clock.advance(250); // some of the 300 ms delays are due now, some not
    const pending = await h.listAll(TaskStatus.PENDING_SUBMIT);
    const { tasks, pages } = await allPages(h, { status: TaskStatus.PENDING_SUBMIT, limit: 7 });
    expect(ids(tasks)).toEqual(listed(pending, TaskStatus.PENDING_SUBMIT, h.clock.now()));
    expect(pages).toBe(Math.ceil(57 / 7));
    expect(tasks).toEqual(await Promise.all(tasks.map((t) => h.mustGet(t.id))));
    const one = await h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 500 });
    expect(ids(one.tasks)).toEqual(ids(tasks));
    expect(one.nextCursor).toBeNull();
  });

  it('PENDING_SUBMIT with aging: the aged order', async () => {
    const h = await ctx.open({ agingIntervalMs: 100 });
    const [a] = await h.create({ priority: 0 });
    h.clock.advance(1000);
    const more = await h.create({ priority: 5 }, { priority: 20 }, { priority: 10 }, { priority: 10, delayMs: 50 });
    const { tasks } = await allPages(h, { status: TaskStatus.PENDING_SUBMIT, limit: 2 });
    expect(ids(tasks)).toEqual(listed([a, ...more], TaskStatus.PENDING_SUBMIT, h.clock.now(), 100));
    expect(ids(tasks).slice(0, 3)).toEqual([more[1].id, more[2].id, a.id]);
  });

  it('other statuses newest first (seq descending), paged; SUBMITTING and terminal statuses', async () => {
    const h = await ctx.open();
    const created = await h.create(...Array.from({ length: 23 }, (_, i) => ({ priority: i })));
    const claimed = await h.claim(23);
    for (const c of claimed.slice(0, 15)) await h.complete(c, TaskStatus.FAILED);
    for (const status of [TaskStatus.SUBMITTING, TaskStatus.FAILED, TaskStatus.SUCCEEDED]) {
      const all = await h.listAll(status);
      const { tasks } = await allPages(h, { status, limit: 4 });
      expect(ids(tasks)).toEqual(listed(all, status, h.clock.now()));
      expect(tasks).toEqual(all.sort((a, b) => b.seq - a.seq));
    }
    expect((await h.store.query({ status: TaskStatus.FAILED, limit: 15 })).nextCursor).toBeNull();
    expect(created).toHaveLength(23);
  });

  it('filters: type, tenant, provider, account, priority range, alone and together, on every status', async () => {
    const h = await ctx.open();
    const r = rng(4242);
    const specs = Array.from({ length: 240 }, () => ({
      type: ['ocr', 'mail', 'pdf'][r(3)],
      priority: r(9) - 4,
      providerKey: ['pa', 'pb'][r(2)],
      accountId: r(2) ? `a${r(3)}` : null,
      tenantId: r(3) ? `t${r(4)}` : null,
      delayMs: r(8) === 0 ? 10_000 : 0,
    }));
    await h.store.create(specs.map((s) => h.newTask(s)));
    const claimed = await h.claim(60);
    for (const c of claimed.slice(0, 40)) await h.complete(c, TaskStatus.FAILED);
    const filters: Array<Partial<TaskQuery>> = [
      { type: 'ocr' },
      { tenantId: 't1' },
      { providerKey: 'pb' },
      { accountId: 'a2' },
      { minPriority: 2 },
      { maxPriority: -3 },
      { minPriority: -1, maxPriority: 1 },
      { type: 'mail', tenantId: 't0', providerKey: 'pa', minPriority: 0 },
      { providerKey: 'pa', accountId: 'a1', maxPriority: 2 },
      { type: 'nope' },
    ];
    const now = h.clock.now();
    for (const status of [TaskStatus.PENDING_SUBMIT, TaskStatus.FAILED, TaskStatus.SUBMITTING]) {
      const all = await h.listAll(status);
      for (const f of filters) {
        const want = all.filter(
          (t) =>
            (f.type === undefined || t.type === f.type) &&
            (f.tenantId === undefined || t.tenantId === f.tenantId) &&
            (f.providerKey === undefined || t.providerKey === f.providerKey) &&
            (f.accountId === undefined || t.accountId === f.accountId) &&
            (f.minPriority === undefined || t.priority >= f.minPriority) &&
            (f.maxPriority === undefined || t.priority <= f.maxPriority),
        );
        const { tasks } = await allPages(h, { status, limit: 9, ...f });
        expect([status, f, ids(tasks)]).toEqual([status, f, listed(want, status, now)]);
      }
    }
  });

  it('type filter on tasks whose id or type JSON escapes (quotes, backslashes, slashes, non-ASCII)', async () => {
    const h = await ctx.open();
    const made = await h.create(
      { id: 'a"quoted\\id/1', type: 'o"c/r' },
      { id: 'plain-2', type: 'o"c/r' },
      { id: 'ünï-3', type: 'o"c/r', priority: 1 },
      { id: 'other-4', type: 'ocr' },
    );
    const page = await h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 10, type: 'o"c/r' });
    expect(ids(page.tasks)).toEqual([made[2].id, made[0].id, made[1].id]);
    expect(ids((await h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 10, type: 'ocr' })).tasks)).toEqual([made[3].id]);
  });

  it('a sparse filter over long lanes: pages may end short with a cursor, following it finds every match in order', async () => {
    const h = await ctx.open();
    const specs = Array.from({ length: 1500 }, (_, i) => ({ priority: i % 5, providerKey: `p${i % 3}`, type: i % 97 === 0 ? 'rare' : 'bulk', delayMs: i % 10 === 0 ? 60_000 : 0 }));
    await h.store.create(specs.map((x) => h.newTask(x)));
    h.clock.advance(1);
    const all = await h.listAll(TaskStatus.PENDING_SUBMIT);
    const want = listed(all.filter((t) => t.type === 'rare'), TaskStatus.PENDING_SUBMIT, h.clock.now());
    const { tasks } = await allPages(h, { status: TaskStatus.PENDING_SUBMIT, limit: 4, type: 'rare' });
    expect(ids(tasks)).toEqual(want);
  });

  it('search: an exact id or idempotency key, with the status and filters applied', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({ idempotencyKey: 'order-7', type: 'ocr' }, { type: 'mail' });
    const q = (x: Partial<TaskQuery>) => h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 10, ...x });
    expect(await q({ search: a.id })).toEqual({ tasks: [await h.mustGet(a.id)], nextCursor: null });
    expect(ids((await q({ search: 'order-7' })).tasks)).toEqual([a.id]);
    expect(ids((await q({ search: b.id })).tasks)).toEqual([b.id]);
    expect((await q({ search: b.id, type: 'ocr' })).tasks).toEqual([]);
    expect((await q({ search: 'no-such-thing' })).tasks).toEqual([]);
    expect((await h.store.query({ status: TaskStatus.FAILED, limit: 10, search: a.id })).tasks).toEqual([]);
    // an id that is also another task's idempotency key: both, in the query's order
    const [c] = await h.create({ idempotencyKey: b.id, priority: 9 });
    expect(ids((await q({ search: b.id })).tasks)).toEqual([c.id, b.id]);
  });

  it('bad queries -> ValidationError (also through PriorityQueue); a cursor only works with its own status', async () => {
    const h = await ctx.open();
    await h.create({}, {}, {});
    const [c] = await h.claim(1);
    await h.complete(c, TaskStatus.FAILED);
    const queue = new PriorityQueue({ store: h.store, registry: new TaskTypeRegistry() });
    const bad: unknown[] = [
      { status: 'NOPE', limit: 10 },
      { status: TaskStatus.FAILED, limit: 0 },
      { status: TaskStatus.FAILED, limit: 501 },
      { status: TaskStatus.FAILED, limit: 1.5 },
      { status: TaskStatus.FAILED, limit: 10, minPriority: 2 ** 31 },
      { status: TaskStatus.FAILED, limit: 10, tenantId: '' },
      { status: TaskStatus.FAILED, limit: 10, type: 'a\u0001b' },
      { status: TaskStatus.FAILED, limit: 10, cursor: 'garbage' },
      { status: TaskStatus.FAILED, limit: 10, unknown: 1 },
      null,
    ];
    for (const q of bad) {
      await expect(h.store.query(q as TaskQuery)).rejects.toBeInstanceOf(ValidationError);
      await expect(queue.query(q as TaskQuery)).rejects.toBeInstanceOf(ValidationError);
    }
    const first = await h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 1 });
    expect(first.nextCursor).not.toBeNull();
    await expect(h.store.query({ status: TaskStatus.FAILED, limit: 1, cursor: first.nextCursor })).rejects.toBeInstanceOf(ValidationError);
    expect((await queue.query({ status: 'PENDING_SUBMIT', limit: 1, cursor: first.nextCursor })).tasks).toHaveLength(1);
  });

  it('at scale: 3,000 tasks over 120 lanes, every status and a few filters, pages of 50, against the reference', async () => {
    const h = await ctx.open();
    const r = rng(9001);
    const specs = Array.from({ length: 3000 }, () => ({
      priority: r(11) - 5,
      providerKey: `p${r(4)}`,
      tenantId: `t${r(30)}`,
      delayMs: r(10) === 0 ? 60_000 : 0,
      type: r(4) ? 'bulk' : 'rare',
    }));
    for (let i = 0; i < specs.length; i += 1000) await h.store.create(specs.slice(i, i + 1000).map((s) => h.newTask(s)));
    h.clock.advance(10);
    const claimed = await h.claim(400);
    for (const c of claimed.slice(0, 200)) await h.store.complete(fenceOf(c), { status: TaskStatus.SUCCEEDED });
    const now = h.clock.now();
    for (const status of [TaskStatus.PENDING_SUBMIT, TaskStatus.SUCCEEDED]) {
      const all = await h.listAll(status);
      for (const f of [{}, { tenantId: 't7' }, { type: 'rare', minPriority: 3 }] as Array<Partial<TaskQuery>>) {
        const want = all.filter((t) => (f.tenantId === undefined || t.tenantId === f.tenantId) && (f.type === undefined || t.type === f.type) && (f.minPriority === undefined || t.priority >= f.minPriority));
        const { tasks } = await allPages(h, { status, limit: 50, ...f });
        expect(ids(tasks)).toEqual(listed(want, status, now));
      }
    }
  });
}
