import { PermanentError } from './errors';
import type { PollResult } from './handler';
import { Messages, shown } from './messages';
import { MAX_DURATION_MS } from './validation';

/**
 * What a handler hands back (an error, a result, an external id, a delay) is checked and made
 * storable here, before anything is written, so that every store records the same thing and a
 * bad value ends in a clear outcome. Unchecked, such a value made the outcome's write fail on
 * some stores only (PostgreSQL refuses NUL in text and a non-integer bigint, the SQL columns
 * hold 1024 characters of external id, MariaDB's JSON_TABLE refuses a lone surrogate): the task
 * then waited for its lease to expire and its handler ran again, or a poll was retried forever.
 */

/** Longest error text stored, in UTF-16 units; the rest is cut off with a note of its length. */
export const MAX_ERROR_CHARS = 8192;
/** Longest external id, in UTF-16 units (the SQL stores' column holds 1024 characters). */
export const MAX_EXTERNAL_ID_CHARS = 1024;

/** NUL (no SQL text type takes it) and lone UTF-16 surrogates (no UTF-8 form). */
const UNSTORABLE = /\u0000|\p{Cs}/gu;

/** An error as stored on the task: its message, at most MAX_ERROR_CHARS, NUL and lone surrogates as U+FFFD. */
export function errorText(e: unknown): string {
  let s = e instanceof Error ? String(e.message) : typeof e === 'string' ? e : describe(e);
  if (s.length > MAX_ERROR_CHARS) s = `${s.slice(0, MAX_ERROR_CHARS)}... (${s.length - MAX_ERROR_CHARS} more characters cut)`;
  return s.replace(UNSTORABLE, '\uFFFD');
}

function describe(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    try {
      return String(v);
    } catch {
      return Object.prototype.toString.call(v);
    }
  }
}

/** The external id of submit()'s answer; PermanentError when there is none or it cannot be stored. */
export function externalIdOf(out: unknown, type: string): string {
  const id = typeof out === 'string' ? out : typeof out === 'object' && out !== null ? (out as { externalId?: unknown }).externalId : undefined;
  if (typeof id !== 'string' || id === '') throw new PermanentError(Messages.noExternalId(type));
  UNSTORABLE.lastIndex = 0;
  if (id.length > MAX_EXTERNAL_ID_CHARS || UNSTORABLE.test(id)) {
    throw new PermanentError(Messages.badExternalId(type, shown(id), MAX_EXTERNAL_ID_CHARS));
  }
  return id;
}

/**
 * A delay a handler asked for (poll's nextPollMs, NotSubmittedError's retryAfterMs) as the
 * stores take it: whole ms from 0 to MAX_DURATION_MS (Infinity is the longest); `fallback` when
 * it is not a number at all (undefined, NaN: a Retry-After header that was not there).
 */
export function delayOf(ms: unknown, fallback: number): number {
  if (typeof ms !== 'number' || Number.isNaN(ms)) return fallback;
  return Math.min(MAX_DURATION_MS, Math.max(0, Math.ceil(ms)));
}

/**
 * A handler's result as the stores keep it: JSON text (undefined is null). A result JSON cannot
 * carry (a BigInt, a cycle, nesting too deep for JSON.stringify) is a PermanentError.
 */
export function resultOf(value: unknown, type: string, fn: 'run' | 'poll'): unknown {
  if (value === undefined) return null;
  if (typeof value === 'bigint') throw new PermanentError(Messages.resultNotJson(type, fn, 'it is a BigInt'));
  if (typeof value === 'object' && value !== null) {
    try {
      JSON.stringify(value);
    } catch (e) {
      throw new PermanentError(Messages.resultNotJson(type, fn, errorText(e)));
    }
  }
  return value;
}

/** poll()'s answer checked for its shape; an Error (a poll error, retried with back-off) otherwise. */
export function pollResultOf(r: unknown, type: string): PollResult {
  if (typeof r === 'object' && r !== null && typeof (r as { done?: unknown }).done === 'boolean') return r as PollResult;
  throw new Error(Messages.badPollResult(type, shown(r)));
}
