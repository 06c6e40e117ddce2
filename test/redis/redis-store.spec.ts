import {
  ManualClock,
  MAX_AGING_INTERVAL_MS,
  INT32_MAX,
  INT32_MIN,
  StaleLeaseError,
  TaskStatus,
  ValidationError,
  encodeOrderKey,
  fenceOf,
  laneKey,
  type NewTask,
  type Task,
} from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../libs/priority-queue/src/redis';
import { noopTask, seeded } from './support/fixtures';
import { useRedisStores } from './support/redis-stores';

/** What only the Redis store has: key layout, Lua order keys, scripts cache, clock, pub/sub. */
describe('RedisTaskStore specifics', () => {
  const redis = useRedisStores();
  let n = 0;
  const open = (opts: { prefix?: string; queue?: string; clock?: ManualClock; agingIntervalMs?: number } = {}) => redis.open({ prefix: `spec${++n}`, ...opts });

  async function laneMembers(store: RedisTaskStore, t: Task): Promise<string[]> {
    return redis.conn.zrange(`${store.keys.base}lane:${laneKey(t)}`, 0, -1);
  }

  it('tasks a claim returns and completes rebuilt from the lease cache equal what the store holds', async () => {
    const store = await open();
    const other = await open({ prefix: `spec${n}` }); // same queue, another instance: no lease cache
    n++;
    const payloads: unknown[] = [{ a: [1, 'x', null], s: 'é\u001f"' }, null, 'text', 42, [true]];
    await store.create(
      payloads.map((payload, i) =>
        noopTask({ payload, priority: i, timeoutMs: i % 2 ? 60_000 : null, boost: i % 2 ? { beforeDeadlineMs: 1000, priority: 9 } : null, idempotencyKey: `k${i}`, accountId: i % 2 ? 'acc' : null }),
      ),
    );
    const { claimed } = await store.claimSubmissions({ owner: 'me', limit: 10, leaseMs: 30_000 });
    expect(claimed).toHaveLength(payloads.length);
    for (const t of claimed) expect(t).toEqual(await store.get(t.id));
    const outcomes = [
      { status: TaskStatus.SUCCEEDED, result: { r: [1, 2] } },
      { status: TaskStatus.FAILED, error: 'boom' },
      { status: TaskStatus.SUCCEEDED },
      { status: TaskStatus.CANCELED, error: null },
    ] as const;
    const done = await Promise.all(claimed.slice(0, 4).map((t, i) => store.complete(fenceOf(t), outcomes[i])));
    for (const t of done) expect(t).toEqual(await store.get(t.id));
    // the same complete through an instance that never saw the task reads it back instead
    const last = claimed[4];
    const viaOther = await other.complete(fenceOf(last), { status: TaskStatus.SUCCEEDED, result: 'ok' });
    expect(viaOther).toEqual(await store.get(last.id));
    // a stale fence in a batch fails alone
    const again = await Promise.allSettled(claimed.slice(0, 2).map((t) => store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED })));
    expect(again.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // a terminal task holds no lease, even to the last lease id at its current version
    for (const [i, t] of done.entries()) {
      expect(t.leaseId).toBeNull();
      const forged = { id: t.id, leaseId: claimed[i].leaseId!, version: t.version };
      await expect(store.renewLease(forged, 1000)).rejects.toBeInstanceOf(StaleLeaseError);
      await expect(other.complete(forged, { status: TaskStatus.SUCCEEDED })).rejects.toBeInstanceOf(StaleLeaseError);
    }
    for (const t of done) expect(await store.get(t.id)).toEqual(t);
    // a claimed task with an error (retried) and separator bytes in its id, error and payload
    const [{ task: odd }] = await store.create([noopTask({ id: 'a\u001fb\u001f', payload: { s: '\u001f' }, timeoutMs: 60_000 })]);
    const [first] = (await store.claimSubmissions({ owner: 'me', limit: 1, leaseMs: 30_000 })).claimed;
    expect(first.id).toBe(odd.id);
    await store.retry(fenceOf(first), { delayMs: 0, error: 'x\u001fy' });
    const [second] = (await store.claimSubmissions({ owner: 'me', limit: 1, leaseMs: 30_000 })).claimed;
    expect(second).toMatchObject({ id: odd.id, error: 'x\u001fy', attempts: 1 });
    expect(second).toEqual(await store.get(odd.id));
  });

  it.each([0, 1, 60_000, MAX_AGING_INTERVAL_MS])(
    'order keys written by Lua equal core encodeOrderKey byte for byte (aging %d)',
    async (aging) => {
      const r = seeded(aging + 7);
      const clock = new ManualClock(0);
      const store = await open({ clock, agingIntervalMs: aging });
      const times = [-(2 ** 51), -1_700_000_000_123, -1, 0, 1, 1_700_000_000_000, 2 ** 51 - 1e6];
      const priorities = [INT32_MIN, INT32_MIN + 1, -65_536, -65_535, -1, 0, 1, 65_535, 65_536, INT32_MAX - 1, INT32_MAX];
      const created: Task[] = [];
      for (const t of times) {
        clock.set(t);
        const batch = Array.from({ length: 12 }, (_, i) =>
          noopTask({ priority: i < priorities.length ? priorities[i] : Math.floor(r() * 2 ** 32) - 2 ** 31 }),
        );
        created.push(...(await store.create(batch)).map((x) => x.task));
      }
      const members = new Set(await laneMembers(store, created[0]));
      expect(members.size).toBe(created.length);
      for (const t of created) expect(members.has(encodeOrderKey(t, aging) + t.id)).toBe(true);
      // and after a priority change (key recomputed in Lua)
      const moved = await store.changePriority(created[5].id, INT32_MIN);
      expect(await laneMembers(store, moved)).toContain(encodeOrderKey(moved, aging) + moved.id);
    },
  );

  it('lists and counts SUBMITTING tasks through the lease set (no status set); init drops an earlier layout\'s sets', async () => {
    const clock = new ManualClock(1_000);
    const store = await open({ clock });
    const created = (await store.create(Array.from({ length: 6 }, (_, i) => noopTask({ priority: i })))).map((x) => x.task);
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 60_000 });
    expect(claimed).toHaveLength(5);
    // one leaves SUBMITTING for SUBMITTED and is leased again by a poll claim: not SUBMITTING
    const polled = await store.markSubmitted(fenceOf(claimed[0]), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    expect((await store.claimPolls({ owner: 'w', limit: 5, leaseMs: 60_000 })).map((t) => t.id)).toEqual([polled.id]);
    // one completes
    await store.complete(fenceOf(claimed[1]), { status: TaskStatus.SUCCEEDED });
    const submitting = claimed.slice(2).sort((a, b) => a.seq - b.seq);
    const page1 = await store.list({ status: TaskStatus.SUBMITTING, limit: 2 });
    expect(page1.map((t) => t.id)).toEqual(submitting.slice(0, 2).map((t) => t.id));
    const page2 = await store.list({ status: TaskStatus.SUBMITTING, afterSeq: page1[1].seq, limit: 2 });
    expect(page2.map((t) => t.id)).toEqual(submitting.slice(2).map((t) => t.id));
    for (const t of [...page1, ...page2]) expect(t).toEqual(await store.get(t.id));
    expect((await store.stats()).byStatus[TaskStatus.SUBMITTING]).toBe(3);
    expect((await store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(created.length - claimed.length);
    expect(await redis.conn.exists(store.keys.status(TaskStatus.SUBMITTING))).toBe(0);
    // an earlier layout kept SUBMITTING in a status set: the next init deletes it
    await redis.conn.zadd(store.keys.status(TaskStatus.SUBMITTING), 1, submitting[0].id);
    // and (without aging) a due set per pending priority, which stats no longer reads
    const [left] = await store.list({ status: TaskStatus.PENDING_SUBMIT, limit: 10 });
    await redis.conn.zadd(`${store.keys.base}due:${left.priority}`, left.runAt, left.id);
    const again = redis.track(new RedisTaskStore({ connection: redis.conn, prefix: `spec${n}`, clock }));
    await again.init();
    expect(await redis.conn.exists(store.keys.status(TaskStatus.SUBMITTING))).toBe(0);
    expect(await redis.conn.exists(`${store.keys.base}due:${left.priority}`)).toBe(0);
    expect((await again.stats()).byStatus[TaskStatus.SUBMITTING]).toBe(3);
  });

  it.each([0, 60_000])('stats: oldest due wait per priority over ready and parked lanes (aging %d)', async (aging) => {
    const clock = new ManualClock(10_000);
    const store = await open({ clock, agingIntervalMs: aging });
    await store.setLimits({ kind: 'provider', providerKey: 'paused', paused: true });
    const r = seeded(aging + 3);
    const lanes = [{}, { providerKey: 'q' }, { concurrencyKey: 'k' }, { providerKey: 'paused' }, { tenantId: 't', accountId: 'a' }];
    for (let round = 0; round < 6; round++) {
      await store.create(
        Array.from({ length: 8 }, () =>
          noopTask({ priority: Math.floor(r() * 4) * 3 - 3, delayMs: r() < 0.2 ? 100_000 : 0, ...lanes[Math.floor(r() * lanes.length)] }),
        ),
      );
      clock.advance(250 + Math.floor(r() * 500));
      // claims take some heads and park the concurrency-key and paused lanes
      await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 600_000 });
    }
    const pending: Task[] = [];
    for (let page = await store.list({ status: TaskStatus.PENDING_SUBMIT, limit: 7 }); page.length; ) {
      pending.push(...page);
      page = await store.list({ status: TaskStatus.PENDING_SUBMIT, afterSeq: page[page.length - 1].seq, limit: 7 });
    }
    const s = await store.stats();
    const expected = new Map<number, { priority: number; count: number; oldestWaitMs: number }>();
    for (const t of pending) {
      const e = expected.get(t.priority) ?? { priority: t.priority, count: 0, oldestWaitMs: 0 };
      e.count++;
      if (t.runAt <= s.now) e.oldestWaitMs = Math.max(e.oldestWaitMs, s.now - t.runAt);
      expected.set(t.priority, e);
    }
    expect(s.pending).toEqual([...expected.values()].sort((a, b) => b.priority - a.priority));
    expect(new Set(pending.filter((t) => t.runAt <= s.now).map((t) => t.runAt)).size).toBeGreaterThan(2);
    expect(await redis.conn.exists(`${store.keys.base}due:0`)).toBe(aging > 0 && expected.has(0) ? 1 : 0);
    // claimed tasks (priority, runAt, createdAt, seq read from the order key) are what the store holds
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 600_000 });
    expect(claimed.length).toBeGreaterThan(0);
    for (const t of claimed) expect(t).toEqual(await store.get(t.id));
  });

  it('deadline boosts wait in the queue\'s boosts zset (boostAt, then seq) until they fire (also a finished task\'s: a retry may bring it back before boostAt) or its task is purged', async () => {
    const clock = new ManualClock();
    const store = await open({ clock });
    const key = `${store.keys.base}boosts`;
    const boost = (w: number) => ({ timeoutMs: 10_000, boost: { beforeDeadlineMs: w, priority: 5 } });
    const made = (await store.create([noopTask(boost(4000)), noopTask(boost(4000)), noopTask(boost(2000)), noopTask({ ...boost(2000), priority: 1 }), noopTask({})])).map((r) => r.task);
    const [a, b, c, d] = made;
    const members = await redis.conn.zrange(key, 0, -1, 'WITHSCORES');
    // boostAt T+6000 (a, b in seq order), then T+8000 (c, d)
    expect(members.filter((_, i) => i % 2 === 0).map((m) => m.slice(14))).toEqual([a.id, b.id, c.id, d.id]);
    expect(members.filter((_, i) => i % 2 === 1).map(Number)).toEqual([a.boostAt, b.boostAt, c.boostAt, d.boostAt]);
    await store.cancel(b.id);
    const [first] = (await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 60_000 })).claimed;
    expect(first.id).toBe(d.id); // priority 1: the only one above 0
    await store.complete(fenceOf(first), { status: TaskStatus.SUCCEEDED });
    expect((await redis.conn.zrange(key, 0, -1)).map((m) => m.slice(14))).toEqual([a.id, b.id, c.id, d.id]);
    clock.advance(6000);
    const at = await store.claimSubmissions({ owner: 'w', limit: 0, leaseMs: 60_000 });
    expect(at.boosted?.map((x) => x.task.id)).toEqual([a.id]); // b's fired unused (canceled)
    expect((await redis.conn.zrange(key, 0, -1)).map((m) => m.slice(14))).toEqual([c.id, d.id]);
    expect(await store.purge(clock.now(), 10)).toBe(2); // b canceled, d completed: d's unfired boost goes with it
    expect((await redis.conn.zrange(key, 0, -1)).map((m) => m.slice(14))).toEqual([c.id]);
    clock.advance(4000); // c's boost fires first (still pending), then the claim times out c and a (deadlines passed)
    const late = await store.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 60_000 });
    expect(late.boosted?.map((x) => x.task.id)).toEqual([c.id]);
    expect(late.timedOut.map((t) => t.id).sort()).toEqual([a.id, c.id].sort());
    expect(await redis.conn.exists(key)).toBe(0);
  });

  it('every key of a queue carries the hash tag {prefix:queue} (one cluster slot)', async () => {
    const clock = new ManualClock();
    const store = await open({ prefix: 'tagged', queue: 'q1', clock });
    await store.setLimits({ kind: 'provider', providerKey: 'p', qps: 1, accountConcurrency: 1 });
    await store.setLimits({ kind: 'tenant', tenantId: 't', quota: 1 });
    await store.create([
      noopTask({ accountId: 'a', tenantId: 't', concurrencyKey: 'c', idempotencyKey: 'i', timeoutMs: 60_000 }),
      noopTask({ accountId: 'a', tenantId: 't', concurrencyKey: 'c' }),
      noopTask({ delayMs: 5000 }),
    ]);
    const [t] = (await store.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 1000 })).claimed;
    await store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED });
    const keys = await redis.conn.keys('*tagged*');
    expect(keys.length).toBeGreaterThan(15);
    for (const k of keys) {
      const open = k.indexOf('{');
      expect(k.slice(open, k.indexOf('}', open) + 1)).toBe('{tagged:q1}');
    }
    expect(() => new RedisTaskStore({ connection: redis.conn, prefix: 'a{b' })).toThrow(ValidationError);
  });

  it('prefixes isolate applications sharing one Redis', async () => {
    const clock = new ManualClock();
    const a = await open({ prefix: 'appA', clock });
    const b = await open({ prefix: 'appB', clock });
    const [{ task }] = await a.create([noopTask({ idempotencyKey: 'same' })]);
    expect(await b.get(task.id)).toBeNull();
    expect((await b.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 1000 })).claimed).toEqual([]);
    expect((await b.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(0);
    const [other] = await b.create([noopTask({ idempotencyKey: 'same' })]);
    expect(other.created).toBe(true);
    expect((await a.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 1000 })).claimed.map((t) => t.id)).toEqual([task.id]);
  });

  it('refuses to reopen a queue with another aging interval (its order index depends on it)', async () => {
    await open({ prefix: 'aging', agingIntervalMs: 1000 });
    const other = new RedisTaskStore({ connection: redis.conn, prefix: 'aging', agingIntervalMs: 0 });
    await expect(other.init()).rejects.toThrow(ValidationError);
  });

  it('reloads its scripts after the server lost them (SCRIPT FLUSH, restart, failover)', async () => {
    const store = await open({ clock: new ManualClock() });
    await redis.conn.script('FLUSH');
    const [{ task }] = await store.create([noopTask({})]);
    await redis.conn.script('FLUSH');
    expect((await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1000 })).claimed.map((t) => t.id)).toEqual([task.id]);
  });

  it('uses the Redis TIME as its clock when none is given', async () => {
    const store = await open();
    const [s1] = await redis.conn.time();
    const [{ task }] = await store.create([noopTask({ delayMs: 250, timeoutMs: 1000 })]);
    const [s2] = await redis.conn.time();
    expect(task.createdAt).toBeGreaterThanOrEqual(Number(s1) * 1000);
    expect(task.createdAt).toBeLessThanOrEqual((Number(s2) + 1) * 1000);
    expect(task.runAt).toBe(task.createdAt + 250);
    expect(task.deadlineAt).toBe(task.createdAt + 1000);
    const now = await store.now();
    expect(Math.abs(now - task.createdAt)).toBeLessThan(60_000);
  });

  it('a claim leaves every lane it took from at its next head (or not ready when emptied), whatever share of the lane it took', async () => {
    const store = await open();
    const rnd = seeded(7);
    const created: Task[] = [];
    const readyIndex = async () => {
      for (const lane of new Set(created.map((t) => laneKey(t)))) {
        const head = (await redis.conn.zrange(`${store.keys.base}lane:${lane}`, 0, 0))[0];
        const entry = await redis.conn.hget(`${store.keys.base}laneready`, lane);
        if (head === undefined) expect(entry).toBeNull();
        else {
          expect(entry).toBe(head.slice(0, head.length - created[0].id.length) + lane);
          expect(await redis.conn.zscore(`${store.keys.base}ready`, entry!)).toBe('0');
        }
      }
      expect(await redis.conn.zcard(`${store.keys.base}ready`)).toBe(await redis.conn.hlen(`${store.keys.base}laneready`));
    };
    // claims in turn with these limits take exactly `tasks`, in DESIGN §2 order
    const drain = async (tasks: NewTask[], limits: number[]) => {
      const made = (await store.create(tasks)).map((r) => r.task);
      created.push(...made);
      await readyIndex();
      const got: Task[] = [];
      for (const limit of limits) {
        got.push(...(await store.claimSubmissions({ owner: 'w', limit, leaseMs: 30_000 })).claimed);
        await readyIndex();
      }
      expect(got.map((t) => t.id)).toEqual(made.sort((a, b) => b.priority - a.priority || a.seq - b.seq).map((t) => t.id));
    };
    const solo = (n: number) => Array.from({ length: n }, (_, i) => noopTask({ providerKey: 'solo', priority: i % 3 }));
    // a lone lane: taken in part, then exactly to its end; another one past its end
    await drain(solo(10), [1, 2, 3, 4]);
    await drain(solo(5), [8]);
    // three lanes, interleaved priorities: a lane taken up to another's head, in part, to its end
    await drain(
      Array.from({ length: 60 }, (_, i) => noopTask({ providerKey: `lane${i % 3}`, priority: Math.floor(rnd() * 4) })),
      [1, 2, 5, 1, 3, 8, 1, 1, 4, 2, 7, 1, 30],
    );
  });

  it('claimSubmissions tells when to come back: the next delayed runAt or the next rate token', async () => {
    const clock = new ManualClock();
    const store = await open({ clock });
    const [{ task: later }] = await store.create([noopTask({ delayMs: 5000 })]);
    let claim = await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1000 });
    expect(claim.claimed).toEqual([]);
    expect(claim.nextWakeAt).toBe(later.runAt);

    await store.setLimits({ kind: 'provider', providerKey: 'r', qps: 4 });
    await store.create([noopTask({ providerKey: 'r' }), noopTask({ providerKey: 'r' })]);
    claim = await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 1000 });
    expect(claim.claimed).toHaveLength(1);
    expect(claim.nextWakeAt).toBe(clock.now() + 250);
    clock.advance(250);
    expect((await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 1000 })).claimed).toHaveLength(1);
  });

  it('publishes a wake to subscribers when work is created or a slot frees', async () => {
    const clock = new ManualClock();
    const producer = await open({ prefix: 'wake', clock });
    const consumer = await open({ prefix: 'wake', clock });
    const bystander = await open({ prefix: 'wake-other', clock });
    let wakes = 0;
    let foreign = 0;
    const unsubscribe = await consumer.subscribe(() => wakes++);
    const unsubscribeForeign = await bystander.subscribe(() => foreign++);
    const waitFor = async (cond: () => boolean) => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(cond()).toBe(true);
    };

    await producer.create([noopTask({ concurrencyKey: 'k' }), noopTask({ concurrencyKey: 'k' })]);
    await waitFor(() => wakes >= 1);
    const [held] = (await consumer.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 1000 })).claimed;
    const before = wakes;
    await producer.complete(fenceOf(held), { status: TaskStatus.SUCCEEDED }); // frees k: the second task's lane unparks
    await waitFor(() => wakes > before);
    await unsubscribe();
    await unsubscribeForeign();
    expect(foreign).toBe(0);
  });

  it('a create wakes workers when it gives a lane a new head or delays a task, not when it queues behind the ready head of every lane it adds to', async () => {
    const clock = new ManualClock();
    const store = await open({ clock });
    const sub = redis.conn.duplicate();
    let wakes = 0;
    let markers = 0;
    sub.on('message', (_channel: string, message: string) => (message === 'marker' ? markers++ : wakes++));
    await sub.subscribe(store.keys.channel);
    // pub/sub keeps the order of one channel: once our marker arrives, every wake published before it has
    const settled = async () => {
      const want = markers + 1;
      await redis.conn.publish(store.keys.channel, 'marker');
      for (let i = 0; i < 500 && markers < want; i++) await new Promise((r) => setTimeout(r, 5));
      expect(markers).toBe(want);
    };
    try {
      const rnd = seeded(15);
      const LANES = 300;
      const head = new Map<number, number>(); // lane -> priority of its head (nothing is claimed: heads only rise)
      const due: NewTask[] = [];
      let expected = 0;
      for (let call = 0; call < 1500; call++) {
        const size = call % 10 === 9 ? 1 + Math.floor(rnd() * 20) : 1; // singles and some batches
        const tasks = Array.from({ length: size }, () =>
          noopTask({ concurrencyKey: `k${Math.floor(rnd() * LANES)}`, priority: Math.floor(rnd() * 10), delayMs: rnd() < 0.05 ? 60_000 : 0 }),
        );
        await store.create(tasks);
        // a new head: a lane without one, or a higher priority (same runAt and createdAt: a later seq sorts after)
        let wake = false;
        for (const t of tasks) {
          if (t.delayMs > 0) wake = true;
          else if ((head.get(Number(t.concurrencyKey!.slice(1))) ?? -1) < t.priority) wake = true;
        }
        for (const t of tasks) {
          if (t.delayMs > 0) continue;
          due.push(t);
          const lane = Number(t.concurrencyKey!.slice(1));
          head.set(lane, Math.max(head.get(lane) ?? -1, t.priority));
        }
        if (wake) expected++;
        if (call % 100 === 99 || call < 20) {
          await settled();
          expect({ call, wakes }).toEqual({ call, wakes: expected });
        }
      }
      await settled();
      expect(wakes).toBe(expected);
      expect(expected).toBeLessThan(1500 / 2); // most creates of this world queue behind a ready head
      // the ready lanes are what a claim needs: every lane's head, one per concurrency key
      const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 10_000, leaseMs: 60_000 });
      const heads = new Map<string, NewTask>();
      for (const t of due) {
        const h = heads.get(t.concurrencyKey!);
        if (!h || t.priority > h.priority) heads.set(t.concurrencyKey!, t);
      }
      expect(new Set(claimed.map((t) => t.id))).toEqual(new Set([...heads.values()].map((t) => t.id)));
    } finally {
      await sub.quit();
    }
  });

  it('wakes its subscribers once the subscriber connection is back (what was published meanwhile is lost)', async () => {
    const store = await open({ prefix: 'rewake' });
    let wakes = 0;
    let woke: () => void = () => undefined;
    const unsubscribe = await store.subscribe(() => {
      wakes++;
      woke();
    });
    const again = new Promise<void>((r) => (woke = r));
    // the server drops every pub/sub client (as a restart or a network cut would); ioredis reconnects
    const killed = Number(await redis.conn.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
    expect(killed).toBeGreaterThanOrEqual(1);
    await again;
    expect(wakes).toBeGreaterThanOrEqual(1);
    // and it listens again: a create is announced
    const next = new Promise<void>((r) => (woke = r));
    await store.create([noopTask({})]);
    await next;
    await unsubscribe();
  });
});
