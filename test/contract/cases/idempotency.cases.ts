import {
  IdempotencyConflictError,
  TaskStatus,
  type CreateResult,
  type NewTask,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, type Harness } from '../harness';
import { queueOn } from './validation.cases';

/**
 * DESIGN §1 idempotency keys: the same key with the same type, tenant and payload returns the
 * task that holds it; any other type, tenant or payload is an IdempotencyConflictError and the
 * whole create batch writes nothing. Payloads compare as JSON values (object key order aside).
 */

async function conflictOf(p: Promise<unknown>): Promise<IdempotencyConflictError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdempotencyConflictError);
  return err as IdempotencyConflictError;
}

/** Every task of the store by id (status, version, payload: to show nothing changed). */
async function snapshot(h: Harness): Promise<Map<string, unknown>> {
  return new Map((await h.all()).map((t) => [t.id, t]));
}

const PAYLOAD = { a: 1, b: { c: 'x', d: [1, { e: true, f: null }] }, g: 'ü€𝄞' };
const SAME_REORDERED = { g: 'ü€𝄞', b: { d: [1, { f: null, e: true }], c: 'x' }, a: 1 };

export function idempotencyCases(ctx: ContractContext): void {
  it('same key, type, tenant and payload (object keys in another order) returns the existing task, in any status', async () => {
    const h = await ctx.open();
    const first = await h.createOne({ idempotencyKey: 'k', type: 'job', tenantId: 't', payload: PAYLOAD });
    const again = await h.store.create([h.newTask({ idempotencyKey: 'k', type: 'job', tenantId: 't', payload: SAME_REORDERED, priority: 9 })]);
    expect(again).toEqual([{ task: first, created: false }]);
    const [claimed] = await h.claim(1);
    await h.complete(claimed);
    const done = await h.store.create([h.newTask({ idempotencyKey: 'k', type: 'job', tenantId: 't', payload: SAME_REORDERED })]);
    expect(done[0]).toMatchObject({ created: false, task: { id: first.id, status: TaskStatus.SUCCEEDED } });
    expect(await h.all()).toHaveLength(1);
  });

  it.each<[string, Partial<NewTask>, string[]]>([
    ['another type', { type: 'other' }, ['type']],
    ['another tenant', { tenantId: 'u' }, ['tenantId']],
    ['no tenant instead of one', { tenantId: null }, ['tenantId']],
    ['another payload', { payload: { ...PAYLOAD, a: 2 } }, ['payload']],
    ['an array payload in another order', { payload: { ...PAYLOAD, b: { c: 'x', d: [{ e: true, f: null }, 1] } } }, ['payload']],
    ['a payload with one more field', { payload: { ...PAYLOAD, h: null } }, ['payload']],
    ['a number payload written as a string', { payload: { ...PAYLOAD, a: '1' } }, ['payload']],
    ['another type, tenant and payload', { type: 'other', tenantId: 'u', payload: [PAYLOAD] }, ['type', 'tenantId', 'payload']],
  ])('same key with %s: IdempotencyConflictError naming the field, the whole batch writes nothing', async (_name, over, fields) => {
    const h = await ctx.open();
    const first = await h.createOne({ idempotencyKey: 'k', type: 'job', tenantId: 't', payload: PAYLOAD });
    const [claimed] = await h.claim(1); // a task in flight: slots held, version moved
    const before = await snapshot(h);
    const batch = [h.newTask({ idempotencyKey: 'fresh' }), h.newTask(), h.newTask({ idempotencyKey: 'k', type: 'job', tenantId: 't', payload: PAYLOAD, ...over })];
    const err = await conflictOf(h.store.create(batch));
    expect(err).toMatchObject({ key: 'k', fields, taskId: first.id, index: 2 });
    expect(err.message).toContain('"k"');
    for (const f of fields) expect(err.message).toContain(f);
    expect(err.message).toMatch(/Nothing was queued/);
    expect(await snapshot(h)).toEqual(before);
    expect((await h.store.stats()).inFlightByProvider).toEqual({ p: 1 });
    // nothing of the batch was written: its ids are free, its fresh key too
    for (const t of batch) expect(await h.store.get(t.id)).toBeNull();
    const retried = await h.store.create([h.newTask({ idempotencyKey: 'fresh' })]);
    expect(retried[0].created).toBe(true);
    expect(claimed.id).toBe(first.id);
  });

  it('within one batch: the same key twice identically gives one task twice; differently, a conflict and nothing written', async () => {
    const h = await ctx.open();
    const a = h.newTask({ idempotencyKey: 'dup', payload: PAYLOAD, tenantId: 't' });
    const res = await h.store.create([a, h.newTask(), h.newTask({ idempotencyKey: 'dup', payload: SAME_REORDERED, tenantId: 't' })]);
    expect(res.map((r) => r.created)).toEqual([true, true, false]);
    expect(res[2].task).toEqual(res[0].task);
    expect(res[0].task.id).toBe(a.id);

    const h2 = await ctx.open();
    const batch = [h2.newTask({ idempotencyKey: 'x', payload: 1 }), h2.newTask(), h2.newTask({ idempotencyKey: 'x', payload: 2 }), h2.newTask()];
    const err = await conflictOf(h2.store.create(batch));
    expect(err).toMatchObject({ key: 'x', fields: ['payload'], taskId: batch[0].id, index: 2 });
    await h2.expectEmpty();
  });

  it('a conflict at the end of a batch of 500 keyed tasks writes none of them', async () => {
    const h = await ctx.open();
    const held = await h.createOne({ idempotencyKey: 'held', payload: { n: 0 } });
    const batch: NewTask[] = [];
    for (let i = 0; i < 499; i++) batch.push(h.newTask({ idempotencyKey: `key-${i}`, tenantId: `t${i % 7}`, accountId: `a${i % 11}`, payload: { i } }));
    batch.push(h.newTask({ idempotencyKey: 'held', payload: { n: 1 } }));
    const err = await conflictOf(h.store.create(batch));
    expect(err).toMatchObject({ key: 'held', index: 499, taskId: held.id, fields: ['payload'] });
    expect(ids(await h.all())).toEqual([held.id]);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(1);
    // the 499 keys are free: the same batch without the conflicting input goes in whole
    const res = await h.store.create(batch.slice(0, 499));
    expect(res.every((r) => r.created)).toBe(true);
    expect(await h.claimIds(1)).toEqual([held.id]);
  });

  it('concurrent creates of one key: identical ones all get the one task; different ones conflict', async () => {
    const h = await ctx.open();
    const same = await Promise.all(Array.from({ length: 8 }, () => h.store.create([h.newTask({ idempotencyKey: 'race', payload: { v: 1 } })])));
    const winners = same.flat().filter((r: CreateResult) => r.created);
    expect(winners).toHaveLength(1);
    expect(new Set(same.flat().map((r) => r.task.id))).toEqual(new Set([winners[0].task.id]));

    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => h.store.create([h.newTask({ idempotencyKey: 'race2', payload: { v: i } })])));
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    expect(ok).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(IdempotencyConflictError);
    expect(await h.all()).toHaveLength(2);
  });

  it('through PriorityQueue: submit and submitMany return the existing task or throw the conflict, writing nothing', async () => {
    const h = await ctx.open();
    const queue = queueOn(h, ['other']);
    const first = await queue.submit({ type: 'job', idempotencyKey: 'order-1', tenantId: 't', payload: PAYLOAD });
    expect(await queue.submit({ type: 'job', idempotencyKey: 'order-1', tenantId: 't', payload: SAME_REORDERED, priority: 5 })).toEqual(first);
    // the scenario of the report: tenant B's send-email with tenant A's key
    const err = await conflictOf(queue.submit({ type: 'other', idempotencyKey: 'order-1', tenantId: 'B', payload: { to: 'b@example.com' } }));
    expect(err.fields).toEqual(['type', 'tenantId', 'payload']);
    expect(err.message).not.toContain('example.com');

    const before = await snapshot(h);
    const many = await conflictOf(
      queue.submitMany([
        { type: 'job', idempotencyKey: 'order-2', payload: 1 },
        { type: 'job', payload: 2 },
        { type: 'job', idempotencyKey: 'order-1', tenantId: 't', payload: { ...PAYLOAD, a: 3 } },
      ]),
    );
    expect(many).toMatchObject({ index: 2, fields: ['payload'] });
    expect(await snapshot(h)).toEqual(before);

    const twice = await queue.submitMany([
      { type: 'job', idempotencyKey: 'order-3', payload: { x: 1, y: 2 } },
      { type: 'job', idempotencyKey: 'order-3', payload: { y: 2, x: 1 } },
    ]);
    expect(twice[1]).toEqual(twice[0]);
    await conflictOf(
      queue.submitMany([
        { type: 'job', idempotencyKey: 'order-4', payload: { x: 1 } },
        { type: 'job', idempotencyKey: 'order-4', payload: { x: 2 } },
      ]),
    );
    expect((await h.all()).map((t) => t.idempotencyKey).sort()).toEqual(['order-1', 'order-3']);
  });
}
