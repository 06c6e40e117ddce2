import { compareOrder, INT32_MAX, INT32_MIN, MAX_AGING_INTERVAL_MS } from '../../libs/priority-queue/src/core';
import { MAX_MEMORY_FAIR_TAG, orderMode } from '../../libs/priority-queue/src/stores/memory/order-mode';
import { rng } from '../contract/harness';

interface Keys {
  priority: number;
  runAt: number;
  createdAt: number;
  seq: number;
  rank: number;
  fairTag?: string;
}

/** The order of the lane queues (lane-queue.ts): k1, k2, k3 ascending, then non-zero ranks, then tie. */
function modeCompare(T: number, a: Keys, b: Keys, fair = false): number {
  const m = orderMode(T, fair);
  const tag = (x: Keys) => (x.fairTag === undefined ? 0 : Number(x.fairTag));
  for (const k of [m.k1, m.k2, m.k3]) {
    const ka = k(a.priority, a.runAt, tag(a));
    const kb = k(b.priority, b.runAt, tag(b));
    if (ka !== kb) return ka < kb ? -1 : 1;
  }
  const [ra, rb] = m.usesRank ? [a.rank, b.rank] : [0, 0];
  if (ra !== 0 && rb !== 0) return Math.sign(ra - rb);
  return Math.sign(m.tie(a, b));
}

describe('order modes of the memory store agree with compareOrder exactly', () => {
  const extremes = [INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX];
  const T0 = 1_700_000_000_000;
  // off, small exact, the 2^20 boundary of the exact double mode, just above it, and the maximum
  for (const T of [0, 1, 1000, 2 ** 20, 2 ** 20 + 1, 123_456_789, MAX_AGING_INTERVAL_MS]) {
    it(`T = ${T}`, () => {
      const r = rng(T + 1);
      const tasks: Keys[] = [];
      let seq = 0;
      let maxCreated = -Infinity;
      // ranks as the store gives them: seq while createdAt never went back, else 0
      const rankOf = (createdAt: number, s: number) => (createdAt >= maxCreated ? ((maxCreated = createdAt), s) : 0);
      for (let i = 0; i < 400; i++) {
        const priority = r(3) === 0 ? extremes[r(extremes.length)] : r(7) - 3;
        // runAt differences of 1 ms around keys that tie exactly: runAt = base + k*T
        const k = r(5) - 2;
        const runAt = T0 + (r(2) ? k * T : r(3)) + (r(4) === 0 ? -T0 * 2 : 0);
        const createdAt = T0 + r(3) + Math.floor(i / 50);
        tasks.push({ priority, runAt, createdAt, seq: ++seq, rank: rankOf(createdAt, seq) });
      }
      // exact ties of the aged key at int32 extremes: runAt - p*T equal, 1 ms off
      tasks.push({ priority: INT32_MAX, runAt: T0 + T, createdAt: T0, seq: ++seq, rank: 0 });
      tasks.push({ priority: INT32_MAX - 1, runAt: T0, createdAt: T0, seq: ++seq, rank: 0 });
      tasks.push({ priority: INT32_MAX - 1, runAt: T0 + 1, createdAt: T0, seq: ++seq, rank: 0 });
      const wrong: string[] = [];
      for (const a of tasks) {
        for (const b of tasks) {
          if (modeCompare(T, a, b) !== Math.sign(compareOrder(a, b, T))) wrong.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    });
  }

  it('fair share (DESIGN §7): priority, fair tag, runAt, createdAt, seq; tags exact up to MAX_MEMORY_FAIR_TAG', () => {
    const r = rng(77);
    const T0 = 1_700_000_000_000;
    const top = Number(MAX_MEMORY_FAIR_TAG);
    const tags = [0, 1, 333_333, 1_000_000, 2_000_000, top - 1, top];
    const tasks: Keys[] = [];
    let seq = 0;
    let maxCreated = -Infinity;
    const rankOf = (createdAt: number, s: number) => (createdAt >= maxCreated ? ((maxCreated = createdAt), s) : 0);
    for (let i = 0; i < 500; i++) {
      const createdAt = T0 + r(3) + Math.floor(i / 50) - (r(20) === 0 ? 5 : 0);
      const fairTag = String(r(3) === 0 ? tags[r(tags.length)] : (1 + r(4)) * 1_000_000);
      tasks.push({ priority: r(3) - 1, runAt: T0 + r(4), createdAt, seq: ++seq, rank: rankOf(createdAt, seq), fairTag });
    }
    const wrong: string[] = [];
    for (const a of tasks) {
      for (const b of tasks) {
        if (modeCompare(0, a, b, true) !== Math.sign(compareOrder(a, b))) wrong.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});
