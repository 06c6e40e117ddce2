import {
  AdmissionControl,
  HandlerRegistrationError,
  intOption,
  isIntIn,
  isKey,
  MAX_PAYLOAD_DEPTH,
  TaskEvents,
  TaskTypeRegistry,
  validatePayload,
  validatePriority,
  validateSubmitInput,
  validateTaskId,
  PriorityQueue,
  ValidationError,
  waitForTask,
  type SubmitInput,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from 'nestjs-priority-queue';

const ok: SubmitInput = { type: 't', payload: { a: [1, 'x', null, true, { b: 2.5 }] } };

function messageOf(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error('expected a ValidationError');
}

describe('submit validation', () => {
  it('accepts a plain task', () => {
    expect(() => validateSubmitInput(ok, 1024)).not.toThrow();
  });

  it.each([
    [{ ...ok, priority: 1.5 }, /priority/],
    [{ ...ok, priority: 2147483648 }, /priority/],
    [{ ...ok, priority: -2147483649 }, /priority/],
    [{ ...ok, priority: '5' }, /priority/],
    [{ ...ok, delayMs: -1 }, /delayMs/],
    [{ ...ok, timeoutMs: 0 }, /timeoutMs/],
    [{ ...ok, type: '' }, /type/],
    [{ ...ok, accountId: 'a\u001fb' }, /accountId/],
    [{ ...ok, maxAttempts: 0 }, /maxAttempts/],
    [{ ...ok, priorty: 5 }, /priorty/],
  ])('rejects %j', (input, pattern) => {
    expect(messageOf(() => validateSubmitInput(input as SubmitInput, 1024))).toMatch(pattern);
  });

  it.each([
    [{ ...ok, type: 'a\ud800' }, /type .*lone UTF-16 surrogates/],
    [{ ...ok, providerKey: '\udc00' }, /providerKey/],
    [{ ...ok, accountId: 'x\ud83d' }, /accountId/],
    [{ ...ok, tenantId: '\ude00x' }, /tenantId/],
    [{ ...ok, concurrencyKey: '\ud800\ud800' }, /concurrencyKey/],
    [{ ...ok, idempotencyKey: 'k\udfff' }, /idempotencyKey/],
  ])('rejects a lone surrogate in a key: %j', (input, pattern) => {
    expect(messageOf(() => validateSubmitInput(input as SubmitInput, 1024))).toMatch(pattern);
  });

  it('accepts keys with surrogate pairs (astral characters)', () => {
    expect(() => validateSubmitInput({ ...ok, tenantId: '😀', accountId: '𝄞', concurrencyKey: 'k😀', idempotencyKey: '😀😀', providerKey: 'p𝄞' }, 1024)).not.toThrow();
  });

  it('no submit message has a doubled full stop', () => {
    for (const input of [{ ...ok, priority: '5' }, { ...ok, priority: 0.5, delayMs: -1 }, { ...ok, tenantId: '' }, { ...ok, colour: 1 }]) {
      expect(messageOf(() => validateSubmitInput(input as SubmitInput, 1024))).not.toMatch(/\.\./);
    }
  });

  it('lists every problem of one input, each naming its field', () => {
    const bad = { type: 'x', priority: 0.5, delayMs: -1, tenantId: '', colour: 'red' } as unknown as SubmitInput;
    try {
      validateSubmitInput(bad, 1024);
      throw new Error('expected a ValidationError');
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      const details = (e as ValidationError).details ?? [];
      expect(details).toHaveLength(4);
      for (const field of ['priority', 'delayMs', 'tenantId', 'colour']) expect(details.some((d) => d.includes(field))).toBe(true);
    }
  });

  it('rejects a missing type, a non-object and an array', () => {
    expect(messageOf(() => validateSubmitInput({} as SubmitInput, 1024))).toMatch(/type/);
    expect(messageOf(() => validateSubmitInput(null as unknown as SubmitInput, 1024))).toMatch(/object/);
    expect(messageOf(() => validateSubmitInput([] as unknown as SubmitInput, 1024))).toMatch(/object/);
  });

  it('accepts null or absent optional fields', () => {
    const nulls = { type: 't', priority: null, delayMs: null, timeoutMs: null, accountId: null, maxAttempts: null } as unknown as SubmitInput;
    expect(() => validateSubmitInput(nulls, 1024)).not.toThrow();
    expect(() => validateSubmitInput({ type: 't' }, 1024)).not.toThrow();
  });

  it('accepts the int32 extremes', () => {
    expect(() => validateSubmitInput({ ...ok, priority: -2147483648 }, 1024)).not.toThrow();
    expect(() => validateSubmitInput({ ...ok, priority: 2147483647 }, 1024)).not.toThrow();
  });

  it('rejects payloads that do not survive JSON', () => {
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(messageOf(() => validatePayload(cyc, 1e6))).toMatch(/circular/);
    expect(messageOf(() => validatePayload({ f: () => 1 }, 1e6))).toMatch(/function/);
    expect(messageOf(() => validatePayload({ n: 1n }, 1e6))).toMatch(/BigInt/);
    expect(messageOf(() => validatePayload({ n: NaN }, 1e6))).toMatch(/NaN/);
    expect(messageOf(() => validatePayload({ d: new Date() }, 1e6))).toMatch(/Date/);
    expect(messageOf(() => validatePayload([undefined], 1e6))).toMatch(/undefined/);
  });

  it('rejects a payload over the size limit', () => {
    expect(messageOf(() => validatePayload({ s: 'x'.repeat(100) }, 50))).toMatch(/bytes/);
  });

  it('measures the size of the serialised payload exactly at the limit', () => {
    const payload = { s: 'é'.repeat(10) }; // {"s":"..."}: 8 + 20 bytes of UTF-8
    const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
    expect(() => validatePayload(payload, bytes)).not.toThrow();
    expect(messageOf(() => validatePayload(payload, bytes - 1))).toMatch(new RegExp(`${bytes} bytes`));
    expect(() => validatePayload('x'.repeat(100), 102)).not.toThrow();
    expect(messageOf(() => validatePayload('x'.repeat(100), 101))).toMatch(/bytes/);
  });

  it('names the path of a bad value deep in the payload', () => {
    expect(messageOf(() => validatePayload({ a: [1, { b: Infinity }] }, 1e6))).toMatch(/payload\.a\[1\]\.b/);
    const cyc: unknown[] = [];
    cyc.push({ back: cyc });
    expect(messageOf(() => validatePayload({ list: cyc }, 1e6))).toMatch(/circular/);
  });

  it('a shared sub-object is not a cycle', () => {
    const shared = { x: 1 };
    expect(() => validatePayload({ a: shared, b: shared }, 1e6)).not.toThrow();
  });
});

describe('submitMany validation', () => {
  const queueOf = () => {
    const registry = new TaskTypeRegistry();
    registry.register('t', {});
    const store = new MemoryTaskStore();
    return { store, queue: new PriorityQueue({ store, registry, maxPayloadBytes: 100 }) };
  };

  it.each([
    [[{ type: 't' }, { type: 't', priority: 0.5 }, { type: 't', delayMs: -1 }], /Task #1 of submitMany: .*priority/],
    [[{ type: 't' }, { type: 't' }, { type: 't', colour: 1 }], /Task #2 of submitMany: .*colour/],
    [[{ type: 't', payload: { big: 'x'.repeat(200) } }, { type: 't' }], /Task #0 of submitMany: .*bytes/],
    [[{ type: 't' }, { type: 'nope' }], /Task #1 of submitMany: .*Unknown task type "nope"/],
    [[{ type: 't' }, null], /Task #1 of submitMany: .*object/],
  ])('names the first bad task and what is wrong, writes nothing (%j)', async (inputs, pattern) => {
    const { store, queue } = queueOf();
    const err = await queue.submitMany(inputs as SubmitInput[]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(pattern);
    expect((await store.stats()).byStatus.PENDING_SUBMIT).toBe(0);
  });

  it('accepts a valid batch', async () => {
    const { queue } = queueOf();
    const tasks = await queue.submitMany([{ type: 't', priority: 2, payload: { a: 1 } }, { type: 't', accountId: 'x' }]);
    expect(tasks.map((t) => [t.priority, t.payload, t.accountId])).toEqual([
      [2, { a: 1 }, null],
      [0, null, 'x'],
    ]);
  });
});

describe('task type registry', () => {
  it('refuses two handlers for one type and a handler without run or submit+poll', () => {
    const r = new TaskTypeRegistry();
    r.register('a', {}, { run: () => 1 }, 'A');
    expect(() => r.register('a', {}, { run: () => 2 }, 'B')).toThrow(HandlerRegistrationError);
    expect(() => r.register('b', {}, { submit: () => 'x' }, 'C')).toThrow(/run\(\), or submit\(\) and poll\(\)/);
  });

  it('validates type options', () => {
    const r = new TaskTypeRegistry();
    expect(() => r.register('a', { maxAttempts: 0 })).toThrow(ValidationError);
    expect(() => r.register('a', { backoff: { baseMs: -5 } })).toThrow(/backoff.baseMs/);
  });
});

describe('limit validation', () => {
  const store = new Proxy({} as TaskStore, {
    get: () => () => {
      throw new Error('the store must not be reached with a bad limit');
    },
  });
  const control = new AdmissionControl(store);
  it.each([
    [{ kind: 'provider', providerKey: 'p', qps: 0 }, /qps/],
    [{ kind: 'provider', providerKey: 'p', qps: -1 }, /qps/],
    [{ kind: 'provider', providerKey: 'p', burst: 0.5 }, /burst/],
    [{ kind: 'account', providerKey: 'p', accountId: 'a', concurrency: -1 }, /concurrency/],
    [{ kind: 'tenant', tenantId: '', quota: 1 }, /tenantId/],
    [{ kind: 'concurrencyKey', key: 'k', limit: 1.5 }, /limit/],
    [{ kind: 'bogus' }, /kind/],
    [{ kind: 'provider', providerKey: 'p', qpz: 5 }, /unknown field qpz \(allowed: kind, providerKey, paused, qps, burst, accountConcurrency\)/],
    [{ kind: 'defaultTenant', quota: 1, tenantId: 't', x: 1 }, /unknown fields tenantId, x/],
    [{ kind: 'tenant', tenantId: 't', quota: '5' }, /quota: got "5" \(a string\)/],
    [{ kind: 'tenant', tenantId: 't\ud800', quota: 1 }, /tenantId: got "t\\ud800".*lone UTF-16 surrogates/],
    [{ kind: 'constructor', key: 'k' }, /kind/],
    [{ kind: 'toString' }, /kind/],
  ])('rejects %j before reaching the store', async (update, pattern) => {
    await expect(control.apply(update as never)).rejects.toThrow(pattern);
  });
});

describe('ids, keys and priorities given to the by-id operations', () => {
  it.each([null, undefined, 7, {}, [], '', 'a\u0000', '\ud800', 'a\udc00b', 'x'.repeat(256)])('validateTaskId refuses %j', (id) => {
    expect(messageOf(() => validateTaskId(id))).toMatch(/^Invalid task id: got .*pass the id that submit returned.*Nothing was changed\.$/);
  });

  it.each(['0b6a3b0e-2c1d-4f00-8a00-000000000001', 'x'.repeat(255), '😀', 'a b'])('validateTaskId accepts %j', (id) => {
    expect(() => validateTaskId(id)).not.toThrow();
  });

  it('isKey accepts well-formed strings only (surrogate pairs yes, lone surrogates no)', () => {
    expect(isKey('𝄞😀')).toBe(true);
    expect(isKey('😀'.repeat(127))).toBe(true);
    expect(isKey('😀'.repeat(128))).toBe(false); // 256 UTF-16 units
    for (const bad of ['\ud83d', '\ude00', 'a\ude00\ud83d', '\u007f', 1, null]) expect(isKey(bad)).toBe(false);
  });

  it('validatePriority names a string as a string, without a doubled full stop', () => {
    const m = messageOf(() => validatePriority('5'));
    expect(m).toMatch(/got "5" \(a string\), not an integer/);
    expect(m).not.toMatch(/\.\./);
    expect(messageOf(() => validatePriority(2 ** 31))).toMatch(/got 2147483648;/);
    expect(() => validatePriority(-(2 ** 31))).not.toThrow();
  });
});

describe('payload depth', () => {
  const nested = (levels: number): unknown => {
    let v: unknown = 'leaf';
    for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
    return v;
  };

  it(`accepts ${MAX_PAYLOAD_DEPTH} levels of arrays and objects, refuses ${MAX_PAYLOAD_DEPTH + 1} with a message that says what to do`, () => {
    expect(() => validatePayload(nested(MAX_PAYLOAD_DEPTH), 1e6)).not.toThrow();
    const m = messageOf(() => validatePayload(nested(MAX_PAYLOAD_DEPTH + 1), 1e6));
    expect(m).toBe(`Invalid task: payload nests arrays and objects more than ${MAX_PAYLOAD_DEPTH} levels deep; flatten it or pass a reference to the data. Nothing was queued.`);
  });

  it('a payload nested 100,000 levels deep is a ValidationError, not a RangeError (nor a stack overflow in the size estimate)', () => {
    expect(messageOf(() => validatePayload(nested(100_000), 1e9))).toMatch(/more than 100 levels deep/);
    expect(messageOf(() => validateSubmitInput({ type: 't', payload: { a: [nested(100_000)] } }, 1e9))).toMatch(/levels deep/);
  });

  it('a problem above the depth limit is still named by its path', () => {
    expect(messageOf(() => validatePayload({ a: [{ b: () => 1 }], deep: nested(500) }, 1e6))).toMatch(/payload\.a\[0\]\.b is a function/);
  });
});

describe('integer settings (intOption) and keys with a length (isKey)', () => {
  it('PriorityQueue refuses a maxPayloadBytes that is not an integer >= 1', () => {
    const registry = new TaskTypeRegistry();
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '100']) {
      expect(() => new PriorityQueue({ store: new MemoryTaskStore(), registry, maxPayloadBytes: bad as number })).toThrow(/^Invalid option maxPayloadBytes = .*: expected an integer >= 1\.$/);
    }
    expect(() => new PriorityQueue({ store: new MemoryTaskStore(), registry, maxPayloadBytes: 1 })).not.toThrow();
  });

  it('intOption: the fallback for undefined only, the range inclusive, a required setting has no fallback', () => {
    expect(intOption('x', undefined, 7, 1)).toBe(7);
    expect(intOption('x', 1, 7, 1, 3)).toBe(1);
    expect(intOption('x', 3, 7, 1, 3)).toBe(3);
    for (const v of [null, 0, 4, 2.5, '2', Number.NaN]) expect(() => intOption('x', v, 7, 1, 3)).toThrow(ValidationError);
    expect(() => intOption('x', undefined, null, 1)).toThrow(/^Invalid option x = undefined: expected an integer >= 1\.$/);
    expect(isIntIn(2 ** 53, 0, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('waitForTask refuses a malformed id as get does, before reading the store', async () => {
    let reads = 0;
    const src = { get: async () => (reads++, null), events: new TaskEvents() };
    for (const id of ['', 'a\ud800', 'x'.repeat(256), 'a\u0000b', 7]) {
      await expect(waitForTask(src, id as string, { timeoutMs: 1000 })).rejects.toThrow(/^Invalid task id: got /);
    }
    expect(reads).toBe(0);
  });

  it('isKey takes a shorter maximum length', () => {
    expect(isKey('q'.repeat(64), 64)).toBe(true);
    expect(isKey('q'.repeat(65), 64)).toBe(false);
    expect(isKey('q'.repeat(255))).toBe(true);
    expect(isKey('q'.repeat(256))).toBe(false);
  });
});
