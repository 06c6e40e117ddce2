import {
  IdempotencyConflictError,
  ManualClock,
  PriorityQueue,
  TaskStatus,
  TaskTypeRegistry,
  ValidationError,
  fenceOf,
} from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../libs/priority-queue/src/redis';
import { queueKeys } from '../../libs/priority-queue/src/stores/redis/keys';
import { noopTask } from './support/fixtures';
import { useRedisStores } from './support/redis-stores';

/**
 * Issue 11 §3: every prefix / queue pair has a key space of its own, even when the names contain
 * the `:` that separates them in the hash tag (`shop:eu` + `mail` against `shop` + `eu:mail`).
 */
describe('Redis key space of a prefix and queue', () => {
  const redis = useRedisStores();
  let run = 0;
  const open = (prefix: string, queue: string, clock = new ManualClock()) => redis.open({ prefix, queue, clock });

  /** The hash tag of a key: what Redis Cluster hashes (the text between the first { and the next }). */
  const tagOf = (key: string) => key.slice(key.indexOf('{'), key.indexOf('}', key.indexOf('{')) + 1);

  it('shop:eu + mail and shop + eu:mail are two queues: tasks, idempotency keys, limits and pauses stay apart', async () => {
    const root = `shop${++run}`;
    const clock = new ManualClock();
    const a = await open(`${root}:eu`, 'mail', clock);
    const b = await open(root, 'eu:mail', clock);
    expect(a.keys.base).not.toBe(b.keys.base);

    // tasks: 200 in A (several tenants and accounts), one in B; neither sees the other's
    const inA = await a.create(Array.from({ length: 200 }, (_, i) => noopTask({ type: 'charge-card', idempotencyKey: `k${i}`, tenantId: `t${i % 5}`, accountId: `a${i % 7}`, payload: { amount: i } })));
    const [{ task: inB }] = await b.create([noopTask({ type: 'send-email', idempotencyKey: 'k0', tenantId: 't0', payload: { to: 'b' } })]);
    expect(inA.every((r) => r.created)).toBe(true);
    expect(await b.get(inA[0].task.id)).toBeNull();
    expect(await a.get(inB.id)).toBeNull();
    expect((await b.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(1);
    expect((await a.list({ status: TaskStatus.PENDING_SUBMIT, limit: 1000 })).map((t) => t.type)).toEqual(Array(200).fill('charge-card'));

    // limits: A pauses provider p and caps tenant t0; B's limits stay empty and its task runs
    await a.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    await a.setLimits({ kind: 'tenant', tenantId: 't0', quota: 0 });
    await a.setLimits({ kind: 'concurrencyKey', key: 'ck', limit: 5 });
    expect(await b.getLimits()).toEqual({ providers: {}, accounts: {}, tenants: {}, defaultTenantQuota: null, concurrencyKeys: {}, tenantWeights: {} });
    const claimedB = (await b.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 1000 })).claimed;
    expect(claimedB.map((t) => t.id)).toEqual([inB.id]);
    expect((await a.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 1000 })).claimed).toEqual([]);

    // B pauses too, A resumes: each sees only its own pause
    await b.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    await a.setLimits({ kind: 'provider', providerKey: 'p', paused: false });
    expect((await b.getLimits()).providers.p.paused).toBe(true);
    expect((await a.getLimits()).providers.p.paused).toBe(false);
    expect((await a.claimSubmissions({ owner: 'w', limit: 500, leaseMs: 1000 })).claimed).toHaveLength(160); // tenant t0 (40 tasks) at quota 0
    await b.complete(fenceOf(claimedB[0]), { status: TaskStatus.SUCCEEDED });
    expect((await a.stats()).byStatus[TaskStatus.SUCCEEDED]).toBe(0);

    // no key is shared, and each queue's keys carry one hash tag (one cluster slot)
    const keys = await redis.conn.keys(`*${root}*`);
    const tags = new Set(keys.map(tagOf));
    expect(tags).toEqual(new Set([a.keys.base.slice(0, -1), b.keys.base.slice(0, -1)]));
    for (const k of keys) expect(k.startsWith(a.keys.base) || k.startsWith(b.keys.base)).toBe(true);
    expect(a.keys.channel).not.toBe(b.keys.channel);
  });

  it('the report: tenant B of one application cannot get tenant A of the other one back by idempotency key', async () => {
    const root = `app${++run}`;
    const registry = new TaskTypeRegistry();
    registry.register('charge-card', {});
    registry.register('send-email', {});
    const qa = new PriorityQueue({ store: await open(`${root}:eu`, 'mail'), registry });
    const qb = new PriorityQueue({ store: await open(root, 'eu:mail'), registry });
    const charged = await qa.submit({ type: 'charge-card', tenantId: 'A', idempotencyKey: 'order-1', payload: { card: '4242' } });
    const mailed = await qb.submit({ type: 'send-email', tenantId: 'B', idempotencyKey: 'order-1', payload: { to: 'b@example.com' } });
    expect(mailed.id).not.toBe(charged.id);
    expect(mailed).toMatchObject({ type: 'send-email', tenantId: 'B', payload: { to: 'b@example.com' } });
  });

  it('different prefix / queue pairs always get different bases (every pair of names of 1-4 characters from a, :, \\)', () => {
    const names: string[] = [];
    const grow = (s: string) => {
      if (s.length) names.push(s);
      if (s.length < 4) for (const c of ['a', ':', '\\']) grow(s + c);
    };
    grow('');
    const bases = new Set<string>();
    const twoTags: string[] = [];
    for (const p of names) {
      for (const q of names) {
        const base = queueKeys(p, q).base;
        if (base.indexOf('}') !== base.length - 2) twoTags.push(base); // one hash tag: the whole queue part
        bases.add(base);
      }
    }
    expect(names).toHaveLength(120);
    expect(twoTags).toEqual([]);
    expect(bases.size).toBe(120 * 120);
  });

  it('names without : or \\ are written as they are, : and \\ escaped; names with a lone surrogate, a brace or a control character, empty or too long are refused', () => {
    expect(queueKeys('pq', 'default').base).toBe('{pq:default}:');
    expect(queueKeys('my-app.prod', 'ocr jobs').base).toBe('{my-app.prod:ocr jobs}:');
    expect(queueKeys('shop:eu', 'mail').base).toBe('{shop\\:eu:mail}:');
    expect(queueKeys('shop', 'eu:mail').base).toBe('{shop:eu\\:mail}:');
    for (const [prefix, queue] of [['a\ud800', 'q'], ['a', '\udc00'], ['a{b', 'q'], ['a', 'q}'], ['', 'q'], ['a\u0000', 'q'], ['a', 'q\n'], ['a', 'q'.repeat(256)]]) {
      expect(() => new RedisTaskStore({ connection: redis.conn, prefix, queue })).toThrow(ValidationError);
    }
  });

  it('a task written before idempotency scopes were kept: type and tenant are still compared, its payload cannot be', async () => {
    const store = await open(`scope${++run}`, 'q');
    const [{ task }] = await store.create([noopTask({ type: 'charge-card', idempotencyKey: 'old', tenantId: 'A', payload: { a: 1 } })]);
    await redis.conn.hdel(store.keys.task(task.id), '_i'); // as an earlier version wrote it
    const again = await store.create([noopTask({ type: 'charge-card', idempotencyKey: 'old', tenantId: 'A', payload: { other: true } })]);
    expect(again[0]).toMatchObject({ created: false, task: { id: task.id } });
    await expect(store.create([noopTask({ type: 'charge-card', idempotencyKey: 'old', tenantId: 'B' })])).rejects.toMatchObject({ fields: ['tenantId'] });
    await expect(store.create([noopTask({ type: 'send-email', idempotencyKey: 'old', tenantId: null })])).rejects.toBeInstanceOf(IdempotencyConflictError);
    await expect(store.create([noopTask({ type: 'send-email', idempotencyKey: 'old', tenantId: 'A' })])).rejects.toMatchObject({ fields: ['type'], taskId: task.id });
  });
});
