import { DEFAULT_CONCURRENCY_KEY_LIMIT, gcra } from '../../core/admission';
import type { LaneKeys } from './rows';
import { rk } from './rows';
import type { Resource } from './sql/resources';

/** Every resource a lane's admission reads. */
export function admissionKeys(l: LaneKeys): string[] {
  const keys = [rk.provider(l.provider_key)];
  if (l.account_id !== null) keys.push(rk.account(l.provider_key, l.account_id));
  if (l.tenant_id !== null) keys.push(rk.tenant(l.tenant_id), rk.defaultTenant());
  if (l.concurrency_key !== null) keys.push(rk.concurrencyKey(l.concurrency_key));
  return keys;
}

export type Refusal = { parkOn: string; until: null } | { parkOn: null; until: number };

/**
 * DESIGN §3 for the head of a lane, against counters loaded in the claim transaction. Checks in
 * the order pause, rate, account, tenant, concurrency key; the first limit without room is the
 * resource the lane parks on (a rate refusal parks until the next token is due).
 */
export function refusal(l: LaneKeys, res: (key: string) => Resource, now: number): Refusal | null {
  const p = res(rk.provider(l.provider_key));
  if (p.paused) return { parkOn: p.rkey, until: null };
  if (p.qps !== null) {
    const g = gcra(p.tat, now, p.qps, p.burst ?? 1);
    if (!g.allowed) return { parkOn: null, until: Math.max(now + 1, Math.ceil(g.retryAt)) };
  }
  if (l.account_id !== null) {
    const a = res(rk.account(l.provider_key, l.account_id));
    const limit = a.limit ?? p.accountConcurrency;
    if (limit !== null && a.inUse >= limit) return { parkOn: a.rkey, until: null };
  }
  if (l.tenant_id !== null) {
    const t = res(rk.tenant(l.tenant_id));
    const quota = t.limit ?? res(rk.defaultTenant()).limit;
    if (quota !== null && t.inUse >= quota) return { parkOn: t.rkey, until: null };
  }
  if (l.concurrency_key !== null) {
    const k = res(rk.concurrencyKey(l.concurrency_key));
    if (k.inUse >= (k.limit ?? DEFAULT_CONCURRENCY_KEY_LIMIT)) return { parkOn: k.rkey, until: null };
  }
  return null;
}

/** Takes one unit of every limit of the lane (after `refusal` returned null). */
export function consume(l: LaneKeys, res: (key: string) => Resource, now: number): void {
  const p = res(rk.provider(l.provider_key));
  if (p.qps !== null) {
    p.tat = gcra(p.tat, now, p.qps, p.burst ?? 1).tat;
    p.dirty = true;
  }
  const slots: Resource[] = [];
  if (l.account_id !== null) slots.push(res(rk.account(l.provider_key, l.account_id)));
  if (l.tenant_id !== null) slots.push(res(rk.tenant(l.tenant_id)));
  if (l.concurrency_key !== null) slots.push(res(rk.concurrencyKey(l.concurrency_key)));
  for (const s of slots) {
    s.inUse += 1;
    s.dirty = true;
  }
}
