import {
  AdmissionControl,
  INT32_MAX,
  INT32_MIN,
  MAX_PAYLOAD_DEPTH,
  PriorityQueue,
  TaskNotFoundError,
  TaskStatus,
  TaskTypeRegistry,
  UnknownTaskTypeError,
  ValidationError,
  type LimitUpdate,
  type SubmitInput,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import type { Harness } from '../harness';

/** A PriorityQueue over the case's store, with task types 'job' and `more` (provider 'p'). */
export function queueOn(h: Harness, more: readonly string[] = []): PriorityQueue {
  const registry = new TaskTypeRegistry();
  for (const type of ['job', ...more]) registry.register(type, { providerKey: 'p' });
  return new PriorityQueue({ store: h.store, registry, maxPayloadBytes: 1024 });
}

function cyclic(): unknown {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

/** `levels` arrays (or objects) nested in one another around a number. */
function nested(levels: number, kind: 'array' | 'object' = 'array'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

const LONE_HIGH = 'a\ud800b';
const LONE_LOW = '\udc00';

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
  ['payload nested 10,000 arrays deep', { type: 'job', payload: nested(10_000) }],
  ['payload nested 10,000 objects deep', { type: 'job', payload: { list: [nested(10_000, 'object')] } }],
  ['payload nested one level too deep', { type: 'job', payload: nested(MAX_PAYLOAD_DEPTH + 1) }],
  ['lone high surrogate in type', { type: LONE_HIGH }],
  ['lone low surrogate in providerKey', { type: 'job', providerKey: LONE_LOW }],
  ['lone surrogate in accountId', { type: 'job', accountId: LONE_HIGH }],
  ['lone surrogate in tenantId', { type: 'job', tenantId: LONE_LOW }],
  ['lone surrogate in concurrencyKey', { type: 'job', concurrencyKey: LONE_HIGH }],
  ['lone surrogate in idempotencyKey', { type: 'job', idempotencyKey: '\ud83d' }],
  ['key of 256 characters', { type: 'job', tenantId: 'x'.repeat(256) }],
];

/** Ids that every by-id operation of PriorityQueue refuses with a ValidationError. */
const BAD_IDS: Array<[string, unknown]> = [
  ['null', null],
  ['undefined', undefined],
  ['a number', 42],
  ['an object', { id: 'x' }],
  ['an array', ['x']],
  ['an empty string', ''],
  ['a string with NUL', 'ab\u0000cd'],
  ['a lone high surrogate', 'id-\ud800'],
  ['a lone low surrogate', '\udc00-id'],
  ['a string of 256 characters', 'i'.repeat(256)],
];

/** Well-formed ids no task has: every store answers "not found", whatever the characters. */
const ODD_IDS = ['😀'.repeat(127), 'x'.repeat(255), 'a b\'c"d%_*?[]{}:\\/é', '00000000-0000-4000-8000-00000000000Z'];

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
  ['kind missing', { providerKey: 'p', paused: true } as unknown as LimitUpdate],
  ['null update', null as unknown as LimitUpdate],
  ['an array', [] as unknown as LimitUpdate],
  ['unknown field qpz', { kind: 'provider', providerKey: 'p', qpz: 5 } as unknown as LimitUpdate],
  ['a field of another kind', { kind: 'tenant', tenantId: 't', quota: 1, accountId: 'a' } as unknown as LimitUpdate],
  ['quota as a string', { kind: 'tenant', tenantId: 't', quota: '5' } as unknown as LimitUpdate],
  ['lone surrogate in providerKey', { kind: 'provider', providerKey: LONE_HIGH, paused: true }],
  ['lone surrogate in accountId', { kind: 'account', providerKey: 'p', accountId: LONE_LOW, concurrency: 1 }],
  ['lone surrogate in tenantId', { kind: 'tenant', tenantId: LONE_LOW, quota: 1 }],
  ['lone surrogate in concurrency key', { kind: 'concurrencyKey', key: LONE_HIGH, limit: 1 }],
];

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

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
    expect((err as Error).message).not.toMatch(/\.\./);
    await h.expectEmpty();
  });

  it.each(BAD_IDS)('get / cancel / changePriority / retry / explain / history with %s as id -> ValidationError, nothing changed', async (_name, id) => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const t = await queue.submit({ type: 'job', payload: { a: 1 } });
    const x = id as string;
    for (const call of [() => queue.get(x), () => queue.cancel(x), () => queue.changePriority(x, 5), () => queue.retry(x), () => queue.explain(x), () => queue.history(x)]) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(/^Invalid task id: got .*Nothing was changed\.$/);
    }
    expect(await h.all()).toEqual([t]);
  });

  it('well-formed ids of no task (astral characters, quotes, glob and LIKE characters, 255 long, the shape of the ids the queue made): get null, the other by-id operations TaskNotFoundError', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const t = await queue.submit({ type: 'job' });
    for (const id of [...ODD_IDS, t.id.slice(0, 24) + 'fffffffffffe']) {
      expect(await queue.get(id)).toBeNull();
      for (const call of [() => queue.cancel(id), () => queue.changePriority(id, 1), () => queue.retry(id), () => queue.explain(id), () => queue.history(id)]) {
        await expect(call()).rejects.toBeInstanceOf(TaskNotFoundError);
      }
    }
    expect(await h.all()).toEqual([t]);
  });

  it('keys that differ only in an astral character stay apart (no store folds them into one)', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const admission = new AdmissionControl(h.store);
    const tenants = ['t😀', 't😁', 't\u{1F600}\u{1F600}'];
    for (const tenantId of tenants) {
      await admission.setTenantQuota(tenantId, 1);
      await queue.submitMany([{ type: 'job', tenantId, accountId: tenantId, concurrencyKey: tenantId, idempotencyKey: tenantId }, { type: 'job', tenantId }]);
    }
    const claimed = await h.claim(10);
    expect(claimed.map((t) => t.tenantId).sort()).toEqual([...tenants].sort());
    expect((await h.store.stats()).inFlightByTenant).toEqual(Object.fromEntries(tenants.map((t) => [t, 1])));
    expect(Object.keys((await h.store.getLimits()).tenants).sort()).toEqual([...tenants].sort());
  });

  it('valid payloads at the edges round-trip on every store: nested to the depth limit, lone surrogates inside strings', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const payload = { deep: nested(MAX_PAYLOAD_DEPTH - 1), s: 'x\ud800y\udc00', k: { '\udfff': [LONE_HIGH] } };
    const t = await queue.submit({ type: 'job', payload, idempotencyKey: 'edge' });
    expect(t.payload).toEqual(payload);
    expect((await h.mustGet(t.id)).payload).toEqual(payload);
    expect(await queue.submit({ type: 'job', payload, idempotencyKey: 'edge' })).toEqual(t);
    const [claimed] = await h.claim(1);
    expect(claimed.payload).toEqual(payload);
  });

  it('a priority given as a string is refused as a string, not an integer (submit and changePriority)', async () => {
    const h = await ctx.open();
    const queue = queueOn(h);
    const t = await queue.submit({ type: 'job' });
    const a = await rejection(queue.submit({ type: 'job', priority: '5' as unknown as number }));
    const b = await rejection(queue.changePriority(t.id, '5' as unknown as number));
    for (const err of [a, b]) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(/"5" \(a string\), not an integer/);
      expect((err as Error).message).not.toMatch(/\.\./);
    }
    expect(await h.all()).toEqual([t]);
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
    const err = await rejection(admission.apply(update));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/Limits were not changed\.$/);
    expect(await h.store.getLimits()).toEqual(before);
  });
}
