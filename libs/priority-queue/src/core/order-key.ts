import type { Task } from './task';

/**
 * DESIGN §2. Candidate order: priority desc, runAt asc, createdAt asc, seq asc.
 * With aging (agingIntervalMs = T > 0) the leading key is the static value
 * `runAt - priority * T` ascending, then the same tie-breaks. All arithmetic is exact:
 * the aged key is a bigint (priority * T may exceed 2^53).
 */
export type OrderFields = Pick<Task, 'priority' | 'runAt' | 'createdAt' | 'seq'>;

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
/** Largest aging interval for which |runAt - priority*T| fits a signed 64-bit integer. */
export const MAX_AGING_INTERVAL_MS = 1_000_000_000;

export function agedKey(t: Pick<Task, 'priority' | 'runAt'>, agingIntervalMs: number): bigint {
  return BigInt(t.runAt) - BigInt(t.priority) * BigInt(agingIntervalMs);
}

/** Negative when a goes first. Total: seq is unique. */
export function compareOrder(a: OrderFields, b: OrderFields, agingIntervalMs = 0): number {
  if (agingIntervalMs > 0) {
    const ka = agedKey(a, agingIntervalMs);
    const kb = agedKey(b, agingIntervalMs);
    if (ka !== kb) return ka < kb ? -1 : 1;
  }
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.runAt !== b.runAt) return a.runAt - b.runAt;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.seq - b.seq;
}

/**
 * A fixed-width string whose byte order equals compareOrder; for stores that sort strings
 * (Redis ZRANGE BYLEX, an indexed text column). Each number is offset into an unsigned range and
 * written as zero-padded hex, so that lexicographic order is numeric order.
 */
export function encodeOrderKey(t: OrderFields, agingIntervalMs = 0): string {
  const parts: string[] = [];
  if (agingIntervalMs > 0) parts.push(hex(agedKey(t, agingIntervalMs) + (1n << 63n), 16));
  parts.push(hex(BigInt(INT32_MAX) - BigInt(t.priority), 8)); // priority desc
  parts.push(hex(BigInt(t.runAt) + (1n << 52n), 14)); // times may be negative in tests
  parts.push(hex(BigInt(t.createdAt) + (1n << 52n), 14));
  parts.push(hex(BigInt(t.seq), 14));
  return parts.join('');
}

function hex(v: bigint, width: number): string {
  return v.toString(16).padStart(width, '0');
}
