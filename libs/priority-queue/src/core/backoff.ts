/**
 * Exponential back-off with "equal jitter": half the capped delay is fixed, the other half
 * random, so retries spread out but never fire at once.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
