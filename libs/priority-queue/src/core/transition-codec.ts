import type { TransitionMessage } from './event-transport.port';
import { ALL_STATUSES, type TaskStatus } from './task';

/** Longest error text a message carries. */
export const MESSAGE_ERROR_CHARS = 1000;

type Tuple = [string, string, string | null, string, number, string | null] | [string, string, string | null, string, number, string | null, number];

/** One transition as a tuple: [taskId, type, from, to, at, error], and boostedFrom last on a `boosted` event. */
function tuple(m: TransitionMessage): Tuple {
  const e = m.error ?? null;
  const t: Tuple = [m.taskId, m.type, m.from, m.to, m.at, e !== null && e.length > MESSAGE_ERROR_CHARS ? e.slice(0, MESSAGE_ERROR_CHARS) : e];
  if (m.boostedFrom !== undefined) t.push(m.boostedFrom);
  return t;
}

/**
 * Encodes messages as JSON arrays of tuples, each text at most `maxBytes` long when given
 * (PostgreSQL NOTIFY payloads are limited to 8000 bytes); a single message longer than that is
 * sent with its error text cut until it fits.
 */
export function encodeTransitions(messages: readonly TransitionMessage[], maxBytes = Infinity): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let bytes = 2;
  for (const m of messages) {
    let part = JSON.stringify(tuple(m));
    let size = Buffer.byteLength(part);
    if (size + 2 > maxBytes) {
      const t = tuple(m);
      t[5] = t[5] === null ? null : t[5].slice(0, Math.max(0, t[5].length - (size + 2 - maxBytes)));
      part = JSON.stringify(t);
      size = Buffer.byteLength(part);
      if (size + 2 > maxBytes) continue; // ids alone too long for the transport: dropped (at most once)
    }
    if (parts.length > 0 && bytes + 1 + size > maxBytes) {
      out.push(`[${parts.join(',')}]`);
      parts = [];
      bytes = 2;
    }
    bytes += (parts.length > 0 ? 1 : 0) + size;
    parts.push(part);
  }
  if (parts.length > 0) out.push(`[${parts.join(',')}]`);
  return out;
}

const STATUSES = new Set<string>(ALL_STATUSES);

/** Decodes what encodeTransitions made; anything malformed is skipped. */
export function decodeTransitions(text: string): TransitionMessage[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: TransitionMessage[] = [];
  for (const t of raw) {
    if (!Array.isArray(t) || (t.length !== 6 && t.length !== 7)) continue;
    const [taskId, type, from, to, at, error, boostedFrom] = t as unknown[];
    if (typeof taskId !== 'string' || typeof type !== 'string' || typeof to !== 'string' || !STATUSES.has(to)) continue;
    if (from !== null && (typeof from !== 'string' || !STATUSES.has(from))) continue;
    if (typeof at !== 'number' || (error !== null && typeof error !== 'string')) continue;
    if (boostedFrom !== undefined && !Number.isInteger(boostedFrom)) continue;
    const m: TransitionMessage = { taskId, type, from: from as TaskStatus | null, to: to as TaskStatus, at, error: error as string | null };
    if (boostedFrom !== undefined) m.boostedFrom = boostedFrom as number;
    out.push(m);
  }
  return out;
}
