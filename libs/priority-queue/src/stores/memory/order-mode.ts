import { agedKey, compareOrder } from '../../core/order-key';
import type { TaskRecord } from './task-record';

/**
 * compareOrder() (core/order-key.ts) split into inline numbers for the lane heaps and the
 * ready-lane heap: (k1, k2, k3) ascending, then the creation rank (TaskRecord.rank: the seq of a
 * task created while the clock never went back, which then orders exactly like (createdAt, seq);
 * 0 otherwise), then `tie` on the records. Exact in every mode; the records themselves are only
 * read when all inline keys tie, so sifting does not chase task objects.
 */
export interface OrderMode {
  k1(r: TaskRecord): number;
  k2(r: TaskRecord): number;
  k3(r: TaskRecord): number;
  /** Whether creation ranks may decide (false when k1 is only an approximation). */
  usesRank: boolean;
  tie(a: TaskRecord, b: TaskRecord): number;
}

/** Largest aging interval for which runAt - priority*T is an exact double (|p*T| <= 2^51). */
const EXACT_AGING_MAX_MS = 2 ** 20;

function createdThenSeq(a: TaskRecord, b: TaskRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.seq - b.seq;
}

export function orderMode(agingIntervalMs: number): OrderMode {
  const T = agingIntervalMs;
  if (T <= 0) {
    // priority desc, runAt asc, createdAt asc, seq asc
    return { k1: (r) => -r.priority, k2: (r) => r.runAt, k3: () => 0, usesRank: true, tie: createdThenSeq };
  }
  if (T <= EXACT_AGING_MAX_MS) {
    // runAt - priority*T asc (exact: |priority*T| <= 2^51), priority desc, runAt, createdAt, seq
    return {
      k1: (r) => r.runAt - r.priority * T,
      k2: (r) => -r.priority,
      k3: (r) => r.runAt,
      usesRank: true,
      tie: createdThenSeq,
    };
  }
  // Large T: the aged key needs 64 bits. k1 is its nearest double, which is monotone in the
  // exact value, so unequal k1 order correctly; equal k1 fall back to the exact bigint order.
  return {
    k1: (r) => Number(agedKey(r, T)),
    k2: () => 0,
    k3: () => 0,
    usesRank: false,
    tie: (a, b) => compareOrder(a, b, T),
  };
}
