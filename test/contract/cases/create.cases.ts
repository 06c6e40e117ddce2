import { StaleLeaseError, TaskStatus, ValidationError, fenceOf } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, T0 } from '../harness';

export function createCases(ctx: ContractContext): void {
  it('init is idempotent; now() is the injected clock; aging is off by default', async () => {
    const h = await ctx.open();
    await h.store.init();
    await h.store.init();
    expect(await h.store.now()).toBe(T0);
    h.clock.advance(1234);
    expect(await h.store.now()).toBe(T0 + 1234);
    expect(h.store.agingIntervalMs).toBe(0);
  });

  it('a bad agingIntervalMs is refused with a ValidationError that names the option', async () => {
    for (const bad of [-1, 1.5, 1_000_000_001, Number.NaN]) {
      await expect(ctx.open({ agingIntervalMs: bad })).rejects.toThrow(ValidationError);
      await expect(ctx.open({ agingIntervalMs: bad })).rejects.toThrow(/agingIntervalMs/);
    }
  });

  it('new tasks: PENDING_SUBMIT, version 1, attempts 0, times from the store clock, results in input order', async () => {
    const h = await ctx.open();
    const payload = { a: [1, 'x', null, { b: true }], s: 'ü€𝄞', n: -0.5 };
    const inputs = [
      h.newTask({
        priority: 7,
        delayMs: 250,
        timeoutMs: 5000,
        accountId: 'acc',
        tenantId: 'ten',
        concurrencyKey: 'ck',
        idempotencyKey: 'idem-1',
        maxAttempts: 3,
        idempotent: false,
        payload,
        providerKey: 'prov',
        type: 'typ',
      }),
      h.newTask({ payload: null }),
      h.newTask({ payload: 'plain string' }),
    ];
    const res = await h.store.create(inputs);
    expect(res.map((r) => r.created)).toEqual([true, true, true]);
    expect(ids(res.map((r) => r.task))).toEqual(ids(inputs));
    const t = res[0].task;
    expect(t).toEqual({
      id: inputs[0].id,
      idempotencyKey: 'idem-1',
      type: 'typ',
      payload,
      priority: 7,
      providerKey: 'prov',
      accountId: 'acc',
      tenantId: 'ten',
      concurrencyKey: 'ck',
      runAt: T0 + 250,
      deadlineAt: T0 + 5000,
      boostAt: null,
      boostPriority: null,
      fairTag: null,
      createdAt: T0,
      seq: t.seq,
      status: TaskStatus.PENDING_SUBMIT,
      version: 1,
      attempts: 0,
      maxAttempts: 3,
      idempotent: false,
      leaseOwner: null,
      leaseId: null,
      leaseUntil: null,
      result: null,
      error: null,
      externalId: null,
      nextPollAt: null,
      pollErrors: 0,
      cancelRequested: false,
      updatedAt: T0,
      finishedAt: null,
    });
    expect(res[1].task).toMatchObject({ payload: null, runAt: T0, deadlineAt: null, accountId: null, tenantId: null, concurrencyKey: null, idempotencyKey: null, idempotent: true });
    expect(res[2].task.payload).toBe('plain string');
    for (const r of res) expect(await h.store.get(r.task.id)).toEqual(r.task);
  });

  it('seq is store-wide increasing: in input order within a batch and across calls', async () => {
    const h = await ctx.open();
    const a = await h.create({}, {}, {});
    h.clock.advance(5);
    const b = await h.create({});
    const c = await h.create({ priority: 9 }, { priority: -9 });
    const seqs = [...a, ...b, ...c].map((t) => t.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]);
    for (const s of seqs) expect(Number.isSafeInteger(s)).toBe(true);
  });

  it('get of an unknown id is null', async () => {
    const h = await ctx.open();
    await h.create({});
    expect(await h.store.get('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('idempotency key: a second create returns the existing task (created=false) whatever its status', async () => {
    const h = await ctx.open();
    const first = await h.createOne({ idempotencyKey: 'order-42', payload: { v: 1 }, priority: 3 });
    h.clock.advance(10);
    // same key, type, tenant and payload: the other fields (priority, delay, ...) do not matter
    const again = await h.store.create([h.newTask({ idempotencyKey: 'order-42', payload: { v: 1 }, priority: 99, delayMs: 50 })]);
    expect(again).toEqual([{ task: first, created: false }]);

    const [claimed] = await h.claim(1);
    expect(claimed.id).toBe(first.id);
    const third = await h.store.create([h.newTask({ idempotencyKey: 'order-42', payload: { v: 1 } })]);
    expect(third[0].created).toBe(false);
    expect(third[0].task).toEqual(claimed);

    await h.complete(claimed);
    const fourth = await h.store.create([h.newTask({ idempotencyKey: 'order-42', payload: { v: 1 } })]);
    expect(fourth[0].created).toBe(false);
    expect(fourth[0].task.status).toBe(TaskStatus.SUCCEEDED);
    expect(await h.all()).toHaveLength(1);
  });

  it('idempotency key duplicated inside one batch (and mixed with existing keys): one task per key, input order kept', async () => {
    const h = await ctx.open();
    const existing = await h.createOne({ idempotencyKey: 'k-old', payload: 'old' });
    const inputs = [
      h.newTask({ idempotencyKey: 'k-new', payload: 'new' }),
      h.newTask({ idempotencyKey: 'k-new', payload: 'new' }),
      h.newTask({}),
      h.newTask({ idempotencyKey: 'k-old', payload: 'old' }),
      h.newTask({ idempotencyKey: 'k-new', payload: 'new' }),
    ];
    const res = await h.store.create(inputs);
    expect(res.map((r) => r.created)).toEqual([true, false, true, false, false]);
    expect(ids(res.map((r) => r.task))).toEqual([inputs[0].id, inputs[0].id, inputs[2].id, existing.id, inputs[0].id]);
    expect(res[1].task).toEqual(res[0].task);
    expect((await h.all()).map((t) => t.id).sort()).toEqual([existing.id, inputs[0].id, inputs[2].id].sort());
  });

  it('create is all-or-none: a batch containing an id that already exists fails and writes nothing', async () => {
    const h = await ctx.open();
    const existing = await h.createOne({ priority: 1 });
    const batch = [h.newTask({ idempotencyKey: 'fresh-key' }), h.newTask({ id: existing.id, priority: 50 }), h.newTask()];
    await expect(h.store.create(batch)).rejects.toThrow();
    expect(await h.store.get(batch[0].id)).toBeNull();
    expect(await h.store.get(batch[2].id)).toBeNull();
    expect(await h.store.get(existing.id)).toEqual(existing);
    expect(await h.all()).toHaveLength(1);
    // the idempotency key of the failed batch was not taken
    const retried = await h.store.create([h.newTask({ idempotencyKey: 'fresh-key' })]);
    expect(retried[0].created).toBe(true);
  });

  it('create is all-or-none: the same id twice in one batch writes nothing', async () => {
    const h = await ctx.open();
    const a = h.newTask();
    await expect(h.store.create([h.newTask(), a, { ...a, payload: { other: true } }])).rejects.toThrow();
    await h.expectEmpty();
  });

  it('returned tasks are copies: mutating inputs or results never changes the store', async () => {
    const h = await ctx.open();
    const input = h.newTask({ payload: { nested: { list: [1, 2] } } });
    const [res] = await h.store.create([input]);
    (input.payload as { nested: { list: number[] } }).nested.list.push(3);
    input.priority = 77;
    const created = res.task as typeof res.task & { payload: { nested: { list: number[] } } };
    created.payload.nested.list.push(4);
    created.priority = 99;
    created.status = TaskStatus.FAILED;

    const got = await h.mustGet(input.id);
    expect(got.payload).toEqual({ nested: { list: [1, 2] } });
    expect(got.priority).toBe(0);
    expect(got.status).toBe(TaskStatus.PENDING_SUBMIT);
    (got.payload as { nested: { list: number[] } }).nested.list.length = 0;
    got.version = 1000;
    const [listed] = await h.store.list({ status: TaskStatus.PENDING_SUBMIT, limit: 10 });
    expect(listed.payload).toEqual({ nested: { list: [1, 2] } });
    expect(listed.version).toBe(1);
    listed.runAt = T0 + 1_000_000;

    const [claimed] = await h.claim(5);
    expect(claimed.id).toBe(input.id);
    const snapshot = { ...claimed };
    claimed.leaseId = 'forged';
    claimed.status = TaskStatus.SUCCEEDED;
    (claimed.payload as { nested: { list: number[] } }).nested.list.push(5);
    const after = await h.mustGet(input.id);
    expect(after.status).toBe(TaskStatus.SUBMITTING);
    expect(after.leaseId).toBe(snapshot.leaseId);
    expect(after.payload).toEqual({ nested: { list: [1, 2] } });
    // the real fence still works, the forged one does not
    await expect(h.store.renewLease({ id: input.id, leaseId: 'forged', version: after.version }, 1000)).rejects.toBeInstanceOf(StaleLeaseError);
    await h.store.complete(fenceOf(after), { status: TaskStatus.SUCCEEDED, result: { r: [1] } });
  });
}
