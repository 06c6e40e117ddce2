import { canonicalJson, checkIdempotentBatch, IdempotencyConflictError, payloadFingerprint, scopeDifferences, type NewTask } from '../../libs/priority-queue/src/core';
import { noopTask } from '../redis/support/fixtures';

const task = (over: Partial<NewTask>): NewTask => noopTask({ type: 'job', maxAttempts: 1, ...over });

describe('payload fingerprint (canonical JSON)', () => {
  it('does not depend on the order object keys were written in, at any depth', () => {
    const a = { a: 1, b: { c: [1, { d: 'x', e: null }], f: true }, 'ü': '€', '10': 0, '9': 1 };
    const b = { '9': 1, 'ü': '€', b: { f: true, c: [1, { e: null, d: 'x' }] }, '10': 0, a: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(payloadFingerprint(a)).toBe(payloadFingerprint(b));
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 2 }] })).toBe('{"a":[2,{"c":2,"d":1}],"b":1}');
  });

  it.each<[unknown, unknown]>([
    [1, '1'],
    [[1, 2], [2, 1]],
    [{}, []],
    [null, 'null'],
    [{ a: null }, {}],
    [{ a: 1 }, { a: 1, b: 1 }],
    [{ 'a,"b': 1 }, { a: 1, b: 1 }],
    ['x\ud800', 'x\udc00'],
    [1.5, 1.50000001],
  ])('tells %j from %j', (x, y) => {
    expect(payloadFingerprint(x)).not.toBe(payloadFingerprint(y));
  });

  it('is what JSON gives back: a payload equals its own JSON round trip (numbers, -0, escapes, lone surrogates)', () => {
    const p = { n: [0.1, 1e21, -0, 5e-324, 2 ** 53], s: 'q"\\\n\u0000\ud800', nested: { z: [{}] } };
    expect(payloadFingerprint(JSON.parse(JSON.stringify(p)))).toBe(payloadFingerprint(p));
    expect(payloadFingerprint(p)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('checkIdempotentBatch', () => {
  const none = () => undefined;

  it('passes a batch without keys, or whose keys repeat identically', () => {
    expect(() => checkIdempotentBatch([task({}), task({})], none)).not.toThrow();
    expect(() => checkIdempotentBatch([task({ idempotencyKey: 'k', payload: { a: 1, b: 2 } }), task({ idempotencyKey: 'k', payload: { b: 2, a: 1 } })], none)).not.toThrow();
  });

  it('compares each input with the stored holder first, else with the first input of the key', () => {
    const stored = { id: 'held', type: 'job', tenantId: 't', payloadFingerprint: payloadFingerprint({ a: 1 }) };
    expect(() => checkIdempotentBatch([task({ idempotencyKey: 'k', tenantId: 't', payload: { a: 1 } })], (k) => (k === 'k' ? stored : undefined))).not.toThrow();
    try {
      checkIdempotentBatch([task({}), task({ idempotencyKey: 'k', tenantId: 'u', type: 'x', payload: { a: 1 } })], (k) => (k === 'k' ? stored : undefined));
      throw new Error('expected a conflict');
    } catch (e) {
      expect(e).toBeInstanceOf(IdempotencyConflictError);
      expect(e).toMatchObject({ key: 'k', fields: ['type', 'tenantId'], taskId: 'held', index: 1 });
    }
    const first = task({ idempotencyKey: 'n', payload: 1 });
    expect(() => checkIdempotentBatch([first, task({ idempotencyKey: 'n', payload: 2 })], none)).toThrow(expect.objectContaining({ taskId: first.id, index: 1, fields: ['payload'] }));
  });

  it('uses the fingerprint the queue computed, and computes it when absent', () => {
    const a = task({ idempotencyKey: 'k', payload: { a: 1 }, payloadFingerprint: payloadFingerprint({ a: 1 }) });
    expect(() => checkIdempotentBatch([a, task({ idempotencyKey: 'k', payload: { a: 1 } })], none)).not.toThrow();
    expect(scopeDifferences({ type: 't', tenantId: null, payloadFingerprint: 'x' }, { type: 't', tenantId: null, payloadFingerprint: 'x' })).toEqual([]);
  });
});
