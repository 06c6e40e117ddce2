import { agedKey, compareOrder } from '../../core/order-key';
import type { OrderFields } from './task-table';

/**
 * compareOrder() (core/order-key.ts) split into inline numbers for the lane heaps and the
 * ready-lane heap: (k1, k2, k3) of (priority, runAt) ascending, then the creation rank (the seq
 * of a task created while the clock never went back, which then orders exactly like
 * (createdAt, seq); 0 otherwise), then `tie` on the tasks' order fields. Exact in every mode; the
 * tasks themselves are only read when all inline keys tie, so sifting does not chase tasks.
 */
export interface OrderMode {
  /** `tag`: the task's fair tag as a number (fairness on; exact, see MAX_MEMORY_FAIR_TAG), else 0. */
  k1(priority: number, runAt: number, tag: number): number;
  k2(priority: number, runAt: number, tag: number): number;
  k3(priority: number, runAt: number, tag: number): number;
  /** Whether creation ranks may decide (false when k1 is only an approximation). */
  usesRank: boolean;
  tie(a: OrderFields, b: OrderFields): number;
}

/** Largest aging interval for which runAt - priority*T is an exact double (|p*T| <= 2^51). */
const EXACT_AGING_MAX_MS = 2 ** 20;

function createdThenSeq(a: OrderFields, b: OrderFields): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.seq - b.seq;
}

/**
 * Largest fair tag the memory store keeps (2^53: 9e15, after 9e9 tasks of weight 1 created at one
 * level in one process): below it a tag is an exact double, so the inline keys stay exact. A
 * create past it fails with FairTagOverflowError (the other stores go on to 2^63 - 1).
 */
export const MAX_MEMORY_FAIR_TAG = BigInt(Number.MAX_SAFE_INTEGER);

export function orderMode(agingIntervalMs: number, fair = false): OrderMode {
  const T = agingIntervalMs;
  if (fair) {
    // DESIGN §7: priority desc, fair tag asc, runAt asc, createdAt asc, seq asc (never with aging)
    return { k1: (p) => -p, k2: (_p, _runAt, tag) => tag, k3: (_p, runAt) => runAt, usesRank: true, tie: createdThenSeq };
  }
  if (T <= 0) {
    // priority desc, runAt asc, createdAt asc, seq asc
    return { k1: (p) => -p, k2: (_p, runAt) => runAt, k3: () => 0, usesRank: true, tie: createdThenSeq };
  }
  if (T <= EXACT_AGING_MAX_MS) {
    // runAt - priority*T asc (exact: |priority*T| <= 2^51), priority desc, runAt, createdAt, seq
    return {
      k1: (p, runAt) => runAt - p * T,
      k2: (p) => -p,
      k3: (_p, runAt) => runAt,
      usesRank: true,
      tie: createdThenSeq,
    };
  }
  // Large T: the aged key needs 64 bits. k1 is its nearest double, which is monotone in the
  // exact value, so unequal k1 order correctly; equal k1 fall back to the exact bigint order.
  return {
    k1: (priority, runAt) => Number(agedKey({ priority, runAt }, T)),
    k2: () => 0,
    k3: () => 0,
    usesRank: false,
    tie: (a, b) => compareOrder(a, b, T),
  };
}
