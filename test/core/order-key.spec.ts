import fc from 'fast-check';
import { compareOrder, encodeOrderKey, INT32_MAX, INT32_MIN, MAX_AGING_INTERVAL_MS, type OrderFields } from '../../libs/priority-queue/src/core';

const fields: fc.Arbitrary<OrderFields> = fc.record({
  priority: fc.oneof(fc.integer({ min: INT32_MIN, max: INT32_MAX }), fc.constantFrom(INT32_MIN, INT32_MAX, 0, -1, 1)),
  runAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  createdAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
});
const sign = (x: number) => (x < 0 ? -1 : x > 0 ? 1 : 0);
const lex = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('order key', () => {
  it('encoded keys sort exactly like compareOrder, without aging', () => {
    fc.assert(
      fc.property(fields, fields, (a, b) => {
        expect(lex(encodeOrderKey(a), encodeOrderKey(b))).toBe(sign(compareOrder(a, b)));
      }),
      { seed: 42, numRuns: 5000 },
    );
  });

  it('encoded keys sort exactly like compareOrder, with aging up to the largest interval', () => {
    fc.assert(
      fc.property(fields, fields, fc.integer({ min: 1, max: MAX_AGING_INTERVAL_MS }), (a, b, t) => {
        expect(lex(encodeOrderKey(a, t), encodeOrderKey(b, t))).toBe(sign(compareOrder(a, b, t)));
      }),
      { seed: 7, numRuns: 5000 },
    );
  });

  it('orders priority first, then runAt, createdAt and seq', () => {
    const base = { priority: 0, runAt: 10, createdAt: 10, seq: 5 };
    expect(compareOrder({ ...base, priority: INT32_MAX }, { ...base, priority: INT32_MAX - 1 })).toBeLessThan(0);
    expect(compareOrder({ ...base, priority: INT32_MIN + 1 }, { ...base, priority: INT32_MIN })).toBeLessThan(0);
    expect(compareOrder({ ...base, runAt: 9 }, base)).toBeLessThan(0);
    expect(compareOrder({ ...base, createdAt: 9 }, base)).toBeLessThan(0);
    expect(compareOrder({ ...base, seq: 4 }, base)).toBeLessThan(0);
  });

  it('aging lets a long-waiting low priority pass a fresher high priority', () => {
    const T = 1000;
    const old = { priority: 0, runAt: 0, createdAt: 0, seq: 1 };
    expect(compareOrder(old, { priority: 5, runAt: 4999, createdAt: 4999, seq: 2 }, T)).toBeGreaterThan(0);
    expect(compareOrder(old, { priority: 5, runAt: 5001, createdAt: 5001, seq: 2 }, T)).toBeLessThan(0);
  });
});
