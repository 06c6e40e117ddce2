import { compareOrder, compareOrderParts, orderPartValue, orderParts, type OrderPart } from '../../core/order-key';
import { MAX_DOUBLE_FAIR_TAG } from '../../core/fairness';
import type { OrderFields } from './task-table';

/**
 * compareOrder() (core/order-key.ts) split into inline numbers for the lane queues (sorted runs, lane-queue.ts) and the
 * ready-lane heap: (k1, k2, k3) of (priority, runAt, fair tag) ascending, then the creation rank
 * (the seq of a task created while the clock never went back, which then orders exactly like
 * (createdAt, seq); 0 otherwise), then `tie` on the tasks' order fields. Exact in every mode; the
 * tasks themselves are only read when all inline keys tie, so sifting does not chase tasks.
 *
 * The inline keys are core's order parts (orderParts) in their order, each as inlineKey says;
 * the parts that are not inlined are compared by `tie` (compareOrderParts).
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

type InlineKey = (priority: number, runAt: number, tag: number) => number;

/** Largest aging interval for which runAt - priority*T is an exact double (|p*T| <= 2^51). */
const EXACT_AGING_MAX_MS = 2 ** 20;

/**
 * Largest fair tag the memory store keeps: core's MAX_DOUBLE_FAIR_TAG (2^53 - 1), below which a
 * tag is an exact double, so the inline keys stay exact.
 */
export const MAX_MEMORY_FAIR_TAG = MAX_DOUBLE_FAIR_TAG;

// The keys that need nothing of the store are made once here, not per store: every store's
// lane queues then call the same functions, so compiled create and claim code that inlined them
// stays valid for the next store (a closure per store is a new call target, and its first call
// deoptimizes that code).
const zero: InlineKey = () => 0;
const negPriority: InlineKey = (p) => -p;
const fairTagKey: InlineKey = (_p, _runAt, tag) => tag;
const runAtKey: InlineKey = (_p, runAt) => runAt;

/** A part as an exact number of (priority, runAt, tag); null when it has none (read from the task, or beyond a double). */
function inlineKey(part: OrderPart, T: number): InlineKey | null {
  switch (part) {
    case 'aged':
      return T <= EXACT_AGING_MAX_MS ? (p, runAt) => runAt - p * T : null;
    case 'priority':
      return negPriority;
    case 'fairTag':
      return fairTagKey;
    case 'runAt':
      return runAtKey;
    case 'createdAt':
    case 'seq':
      return null;
  }
}

function createdThenSeq(a: OrderFields, b: OrderFields): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.seq - b.seq;
}

export function orderMode(agingIntervalMs: number, fair = false): OrderMode {
  const T = agingIntervalMs;
  const parts = orderParts(T, fair);
  const keys: InlineKey[] = [];
  let n = 0;
  for (; n < parts.length && keys.length < 3; n++) {
    const k = inlineKey(parts[n], T);
    if (k === null) break;
    keys.push(k);
  }
  if (n === 0) {
    // The first part needs 64 bits (the aged key with a large T). k1 is its nearest double, which
    // is monotone in the exact value, so unequal k1 order correctly; equal k1 fall back to the
    // exact order of every part.
    const first = parts[0];
    return {
      k1: (priority, runAt) => Number(orderPartValue(first, { priority, runAt, createdAt: 0, seq: 0 }, T)),
      k2: zero,
      k3: zero,
      usesRank: false,
      tie: (a, b) => compareOrder(a, b, T),
    };
  }
  const rest = parts.slice(n);
  const ranked = rest.join() === 'createdAt,seq';
  return {
    k1: keys[0],
    k2: keys[1] ?? zero,
    k3: keys[2] ?? zero,
    usesRank: ranked,
    tie: ranked ? createdThenSeq : (a, b) => compareOrderParts(rest, a, b, T),
  };
}
