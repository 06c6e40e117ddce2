import {
  AdmissionControl,
  INT32_MAX,
  INT32_MIN,
  PriorityQueue,
  TaskStatus,
  TaskTypeRegistry,
  UnknownTaskTypeError,
  ValidationError,
  type LimitUpdate,
  type SubmitInput,
} from 'nestjs-priority-queue/core';
import type { ContractContext } from '../task-store.contract';
import type { Harness } from '../harness';

function queueOn(h: Harness): PriorityQueue {
  const registry = new TaskTypeRegistry();
  registry.register('job', { providerKey: 'p' });
  return new PriorityQueue({ store: h.store, registry, maxPayloadBytes: 1024 });
}

function cyclic(): unknown {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

const BAD_SUBMITS: Array<[string, SubmitInput]> = [
  ['non-integer priority', { type: 'job', priority: 1.5 }],
  ['priority above int32', { type: 'job', priority: INT32_MAX + 1 }],
  ['priority below int32', { type: 'job', priority: INT32_MIN - 1 }],
  ['NaN priority', { type: 'job', priority: Number.NaN }],
  ['string priority', { type: 'job', priority: '3' as unknown as number }],
  ['negative delay', { type: 'job', delayMs: -1 }],
  ['fractional delay', { type: 'job', delayMs: 0.5 }],
  ['zero timeout', { type: 'job', timeoutMs: 0 }],
  ['BigInt payload', { type: 'job', payload: { n: BigInt(1) } }],
  ['cyclic payload', { type: 'job', payload: cyclic() }],
  ['function payload', { type: 'job', payload: () => 1 }],
  ['nested function', { type: 'job', payload: { list: [1, { f: () => 1 }] } }],
  ['NaN in payload', { type: 'job', payload: { x: Number.NaN } }],
  ['class instance payload', { type: 'job', payload: new Map([[1, 2]]) }],
  ['too-large payload', { type: 'job', payload: { s: 'x'.repeat(2000) } }],
  ['empty accountId', { type: 'job', accountId: '' }],
  ['control character in tenantId', { type: 'job', tenantId: 'a\u001fb' }],
];

const BAD_LIMITS: Array<[string, LimitUpdate]> = [
  ['qps 0', { kind: 'provider', providerKey: 'p', qps: 0 }],
  ['negative qps', { kind: 'provider', providerKey: 'p', qps: -1 }],
  ['NaN qps', { kind: 'provider', providerKey: 'p', qps: Number.NaN }],
  ['infinite qps', { kind: 'provider', providerKey: 'p', qps: Number.POSITIVE_INFINITY }],
  ['burst 0', { kind: 'provider', providerKey: 'p', burst: 0 }],
  ['fractional burst', { kind: 'provider', providerKey: 'p', burst: 1.5 }],
  ['negative accountConcurrency', { kind: 'provider', providerKey: 'p', accountConcurrency: -1 }],
  ['non-boolean paused', { kind: 'provider', providerKey: 'p', paused: 'yes' as unknown as boolean }],
  ['empty providerKey', { kind: 'provider', providerKey: '', paused: true }],
  ['negative account concurrency', { kind: 'account', providerKey: 'p', accountId: 'a', concurrency: -1 }],
  ['negative tenant quota', { kind: 'tenant', tenantId: 't', quota: -1 }],
  ['fractional default tenant quota', { kind: 'defaultTenant', quota: 2.5 }],
  ['negative concurrency key limit', { kind: 'concurrencyKey', key: 'k', limit: -1 }],
  ['unknown kind', { kind: 'planet' } as unknown as LimitUpdate],
];

export function validationCases(ctx: ContractContext): void {
  it.each(BAD_SUBMITS)('submit with %s -> ValidationError, nothing written', async (_name, input) => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const err = await queue.submit(input).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message.length).toBeGreaterThan(10);
    await h.expectEmpty();
  });

  it('submit of an unknown type -> UnknownTaskTypeError, nothing written', async () => {
    const h = await ctx.open();
    await expect(queueOn(h).submit({ type: 'nope', payload: {} })).rejects.toBeInstanceOf(UnknownTaskTypeError);
    await h.expectEmpty();
  });

  it('submitMany with one bad input among good ones writes nothing', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    await expect(queue.submitMany([{ type: 'job', payload: { a: 1 } }, { type: 'job', priority: 2 }, { type: 'job', priority: 0.1 }])).rejects.toBeInstanceOf(ValidationError);
    await expect(queue.submitMany([{ type: 'job' }, { type: 'unknown' }])).rejects.toBeInstanceOf(ValidationError);
    await h.expectEmpty();
  });

  it('valid submits go through (int32 extremes, idempotency key returns the same task, duplicates in one submitMany)', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const top = await queue.submit({ type: 'job', priority: INT32_MAX, payload: { a: [1] } });
    const bottom = await queue.submit({ type: 'job', priority: INT32_MIN });
    expect(top).toMatchObject({ priority: INT32_MAX, providerKey: 'p', status: TaskStatus.PENDING_SUBMIT, payload: { a: [1] } });
    const [x, y] = await queue.submitMany([
      { type: 'job', idempotencyKey: 'once' },
      { type: 'job', idempotencyKey: 'once' },
    ]);
    expect(y.id).toBe(x.id);
    const z = await queue.submit({ type: 'job', idempotencyKey: 'once' });
    expect(z.id).toBe(x.id);
    expect((await h.all()).length).toBe(3);
    expect(await h.claimIds(1)).toEqual([top.id]);
    expect(bottom.priority).toBe(INT32_MIN);
  });

  it('changePriority through the queue with a bad priority -> ValidationError, task unchanged', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const t = await queue.submit({ type: 'job', priority: 3 });
    for (const p of [1.5, INT32_MAX + 1, Number.NaN]) {
      await expect(queue.changePriority(t.id, p)).rejects.toBeInstanceOf(ValidationError);
    }
    expect(await h.store.get(t.id)).toEqual(t);
  });

  it.each(BAD_LIMITS)('setLimits with %s -> ValidationError, limits unchanged', async (_name, update) => {
    const h = await ctx.open();
    const admission = new AdmissionControl(h.store);
    await admission.apply({ kind: 'provider', providerKey: 'p', qps: 5, burst: 2, accountConcurrency: 3 });
    await admission.apply({ kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 2 });
    await admission.apply({ kind: 'tenant', tenantId: 't', quota: 4 });
    await admission.apply({ kind: 'defaultTenant', quota: 6 });
    await admission.apply({ kind: 'concurrencyKey', key: 'k', limit: 2 });
    const before = await h.store.getLimits();
    await expect(admission.apply(update)).rejects.toBeInstanceOf(ValidationError);
    expect(await h.store.getLimits()).toEqual(before);
  });
}
