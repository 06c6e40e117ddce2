import { compareFairTags } from './fairness';
import type { Task } from './task';

/**
 * DESIGN §2 and §7. Candidate order: priority desc, fair tag asc (fairness on), runAt asc,
 * createdAt asc, seq asc. With aging (agingIntervalMs = T > 0) the leading key is the static value
 * `runAt - priority * T` ascending, then the same tie-breaks (aging and fairness never go
 * together: validation.ts validateOrderOptions). All arithmetic is exact: the aged key is a
 * bigint (priority * T may exceed 2^53), the fair tag a 63-bit integer (fairness.ts).
 *
 * This is the one definition of the order in TypeScript: stores that sort in memory call
 * compareOrder, stores that sort strings call encodeOrderKey, and the Redis scripts write the
 * same bytes (stores/redis/lua/lib.lua orderKey).
 */
export type OrderFields = Pick<Task, 'priority' | 'runAt' | 'createdAt' | 'seq'> & Partial<Pick<Task, 'fairTag'>>;

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
/** Largest aging interval for which |runAt - priority*T| fits a signed 64-bit integer. */
export const MAX_AGING_INTERVAL_MS = 1_000_000_000;

export function agedKey(t: Pick<Task, 'priority' | 'runAt'>, agingIntervalMs: number): bigint {
  return BigInt(t.runAt) - BigInt(t.priority) * BigInt(agingIntervalMs);
}

/**
 * Negative when a goes first. Total: seq is unique. Fair tags are compared when both tasks have
 * one (every task of a store with fairness on does; none of a store without).
 */
export function compareOrder(a: OrderFields, b: OrderFields, agingIntervalMs = 0): number {
  if (agingIntervalMs > 0) {
    const ka = agedKey(a, agingIntervalMs);
    const kb = agedKey(b, agingIntervalMs);
    if (ka !== kb) return ka < kb ? -1 : 1;
  }
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.fairTag != null && b.fairTag != null && a.fairTag !== b.fairTag) return compareFairTags(a.fairTag, b.fairTag);
  if (a.runAt !== b.runAt) return a.runAt - b.runAt;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.seq - b.seq;
}

/** Hex digits of each part of an encoded order key (the Redis scripts and codec.ts read them). */
export const ORDER_KEY_WIDTHS = { aged: 16, priority: 8, fairTag: 16, runAt: 14, createdAt: 14, seq: 14 } as const;

/**
 * A fixed-width string whose byte order equals compareOrder; for stores that sort strings
 * (Redis ZRANGE BYLEX, an indexed text column). Each number is offset into an unsigned range and
 * written as zero-padded hex, so that lexicographic order is numeric order. With `fair` the fair
 * tag follows the priority (16 hex digits); every key of one store has the same layout.
 */
export function encodeOrderKey(t: OrderFields, agingIntervalMs = 0, fair = false): string {
  const w = ORDER_KEY_WIDTHS;
  const parts: string[] = [];
  if (agingIntervalMs > 0) parts.push(hex(agedKey(t, agingIntervalMs) + (1n << 63n), w.aged));
  parts.push(hex(BigInt(INT32_MAX) - BigInt(t.priority), w.priority)); // priority desc
  if (fair) {
    if (t.fairTag == null) throw new Error(`encodeOrderKey: task ${t.seq} has no fair tag on a store with fairness`);
    parts.push(hex(BigInt(t.fairTag), w.fairTag));
  }
  parts.push(hex(BigInt(t.runAt) + (1n << 52n), w.runAt)); // times may be negative in tests
  parts.push(hex(BigInt(t.createdAt) + (1n << 52n), w.createdAt));
  parts.push(hex(BigInt(t.seq), w.seq));
  return parts.join('');
}

function hex(v: bigint, width: number): string {
  return v.toString(16).padStart(width, '0');
}
