import { compareFairTags } from './fairness';
import type { Task } from './task';

/**
 * DESIGN §2 and §7. Candidate order: priority desc, fair tag asc (fairness on), runAt asc,
 * createdAt asc, seq asc. With aging (agingIntervalMs = T > 0) the leading key is the static value
 * `runAt - priority * T` ascending, then the same tie-breaks (aging and fairness never go
 * together: validation.ts validateOrderOptions). All arithmetic is exact: the aged key is a
 * bigint (priority * T may exceed 2^53), the fair tag a 63-bit integer (fairness.ts).
 *
 * This file is the one definition of the order in TypeScript: `orderParts` says which fields
 * are compared and in which order, `orderPartValue` what each one contributes. compareOrder and
 * encodeOrderKey are built on them, and so are the stores' fast forms (memory: inline numbers,
 * stores/memory/order-mode.ts; SQL: the k1 / k2 columns, stores/typeorm/order-columns.ts), which
 * switch over OrderPart: a new part fails to compile there until each says how it holds it. The
 * server-side copies (stores/redis/lua/lib.lua orderKey, the PostgreSQL functions) name this
 * file in their headers.
 */
export type OrderFields = Pick<Task, 'priority' | 'runAt' | 'createdAt' | 'seq'> & Partial<Pick<Task, 'fairTag'>>;

/** One part of the order key; every part compares ascending (see orderPartValue). */
export type OrderPart = 'aged' | 'priority' | 'fairTag' | 'runAt' | 'createdAt' | 'seq';

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
/** Largest aging interval for which |runAt - priority*T| fits a signed 64-bit integer. */
export const MAX_AGING_INTERVAL_MS = 1_000_000_000;

const PLAIN_PARTS: readonly OrderPart[] = Object.freeze(['priority', 'runAt', 'createdAt', 'seq']);
const AGED_PARTS: readonly OrderPart[] = Object.freeze(['aged', 'priority', 'runAt', 'createdAt', 'seq']);
const FAIR_PARTS: readonly OrderPart[] = Object.freeze(['priority', 'fairTag', 'runAt', 'createdAt', 'seq']);

/**
 * The parts of the order key, in the order they are compared (aging and fairness never go
 * together). The last one (seq) is unique.
 */
export function orderParts(agingIntervalMs = 0, fair = false): readonly OrderPart[] {
  return agingIntervalMs > 0 ? AGED_PARTS : fair ? FAIR_PARTS : PLAIN_PARTS;
}

export function agedKey(t: Pick<Task, 'priority' | 'runAt'>, agingIntervalMs: number): bigint {
  return BigInt(t.runAt) - BigInt(t.priority) * BigInt(agingIntervalMs);
}

/**
 * What a part contributes to the key, smaller first: `priority` is the negated priority (larger
 * priority first), `aged` the exact bigint runAt - priority*T, `fairTag` the tag as a bigint,
 * the others the field itself.
 */
export function orderPartValue(part: OrderPart, t: OrderFields, agingIntervalMs: number): number | bigint {
  switch (part) {
    case 'aged':
      return agedKey(t, agingIntervalMs);
    case 'priority':
      return -t.priority;
    case 'fairTag':
      if (t.fairTag == null) throw new Error(`task ${t.seq} has no fair tag on a store with fairness`);
      return BigInt(t.fairTag);
    case 'runAt':
      return t.runAt;
    case 'createdAt':
      return t.createdAt;
    case 'seq':
      return t.seq;
  }
}

/** Compares two tasks on the given parts only (stores use it for the parts their fast form leaves out). */
export function compareOrderParts(parts: readonly OrderPart[], a: OrderFields, b: OrderFields, agingIntervalMs: number): number {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === 'fairTag') {
      // decimal strings: compared without making bigints
      const d = compareFairTags(a.fairTag!, b.fairTag!);
      if (d !== 0) return d;
      continue;
    }
    const x = orderPartValue(part, a, agingIntervalMs);
    const y = orderPartValue(part, b, agingIntervalMs);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Negative when a goes first. Total: seq is unique. Fair tags are compared when both tasks have
 * one (every task of a store with fairness on does; none of a store without).
 */
export function compareOrder(a: OrderFields, b: OrderFields, agingIntervalMs = 0): number {
  return compareOrderParts(orderParts(agingIntervalMs, a.fairTag != null && b.fairTag != null), a, b, agingIntervalMs);
}

/** Hex digits of each part of an encoded order key (the Redis scripts and codec.ts read them). */
export const ORDER_KEY_WIDTHS = { aged: 16, priority: 8, fairTag: 16, runAt: 14, createdAt: 14, seq: 14 } as const;

/** The offset that makes each part's values unsigned in an encoded key. */
const OFFSETS: Readonly<Record<OrderPart, bigint>> = {
  aged: 1n << 63n,
  priority: BigInt(INT32_MAX), // INT32_MAX - priority
  fairTag: 0n,
  runAt: 1n << 52n, // times may be negative in tests
  createdAt: 1n << 52n,
  seq: 0n,
};

/**
 * A fixed-width string whose byte order equals compareOrder; for stores that sort strings
 * (Redis ZRANGE BYLEX, an indexed text column). Each part is offset into an unsigned range and
 * written as zero-padded hex, so that lexicographic order is numeric order. With `fair` the fair
 * tag follows the priority (16 hex digits); every key of one store has the same layout.
 */
export function encodeOrderKey(t: OrderFields, agingIntervalMs = 0, fair = false): string {
  let out = '';
  for (const part of orderParts(agingIntervalMs, fair)) {
    out += (BigInt(orderPartValue(part, t, agingIntervalMs)) + OFFSETS[part]).toString(16).padStart(ORDER_KEY_WIDTHS[part], '0');
  }
  return out;
}
