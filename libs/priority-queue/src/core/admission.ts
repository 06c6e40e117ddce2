import { DEFAULT_TENANT_WEIGHT } from './fairness';
import type { Task } from './task';

/**
 * DESIGN §3. Limits live in the store. A limit left unset (null) means "no limit", except the
 * concurrency-key limit, which defaults to 1 (mutual exclusion).
 */
export interface ProviderLimits {
  paused: boolean;
  /** Submits per second (GCRA); null = unlimited. */
  qps: number | null;
  /** Submits allowed at once on top of the steady rate; null = 1 when qps is set. */
  burst: number | null;
  /** Default concurrency of every account of this provider; null = unlimited. */
  accountConcurrency: number | null;
}

export interface LimitsSnapshot {
  providers: Record<string, ProviderLimits>;
  /** Per-account overrides, keyed by `accountKey(providerKey, accountId)`. */
  accounts: Record<string, { providerKey: string; accountId: string; concurrency: number }>;
  tenants: Record<string, number>;
  /** Quota of every tenant without an override; null = unlimited. */
  defaultTenantQuota: number | null;
  /** Concurrency-key overrides; keys not listed have limit 1. */
  concurrencyKeys: Record<string, number>;
  /**
   * Fair-share weights (DESIGN §7, stores with fairness: 'tenant'): tenants not listed (and the
   * tasks without a tenant) have weight 1. A weight applies to tasks created after it was set.
   */
  tenantWeights: Record<string, number>;
}

/**
 * One change of the limits. `null` removes a limit (back to the default); a field left out
 * is unchanged.
 */
export type LimitUpdate =
  | {
      kind: 'provider';
      providerKey: string;
      paused?: boolean;
      qps?: number | null;
      burst?: number | null;
      accountConcurrency?: number | null;
    }
  | { kind: 'account'; providerKey: string; accountId: string; concurrency: number | null }
  | { kind: 'tenant'; tenantId: string; quota: number | null }
  | { kind: 'defaultTenant'; quota: number | null }
  | { kind: 'concurrencyKey'; key: string; limit: number | null }
  /** Fair-share weight of a tenant, 1 to 1000 (null = back to 1); stores with fairness only. */
  | { kind: 'tenantWeight'; tenantId: string; weight: number | null };

export const DEFAULT_CONCURRENCY_KEY_LIMIT = 1;

export function emptyProviderLimits(): ProviderLimits {
  return { paused: false, qps: null, burst: null, accountConcurrency: null };
}

export function emptyLimits(): LimitsSnapshot {
  return { providers: {}, accounts: {}, tenants: {}, defaultTenantQuota: null, concurrencyKeys: {}, tenantWeights: {} };
}

/** Separator that cannot appear in ids checked by validation (see validation.ts). */
export const KEY_SEPARATOR = '\u001f';

export function accountKey(providerKey: string, accountId: string): string {
  return providerKey + KEY_SEPARATOR + accountId;
}

/**
 * A lane: tasks sharing all admission keys are admitted or refused together (LANES.md).
 */
export function laneKey(t: Pick<Task, 'providerKey' | 'accountId' | 'tenantId' | 'concurrencyKey'>): string {
  return JSON.stringify([t.providerKey, t.accountId, t.tenantId, t.concurrencyKey]);
}

export function effectiveAccountLimit(limits: LimitsSnapshot, providerKey: string, accountId: string): number | null {
  const override = limits.accounts[accountKey(providerKey, accountId)];
  if (override) return override.concurrency;
  return limits.providers[providerKey]?.accountConcurrency ?? null;
}

export function effectiveTenantQuota(limits: LimitsSnapshot, tenantId: string): number | null {
  const q = limits.tenants[tenantId];
  return q !== undefined ? q : limits.defaultTenantQuota;
}

/** The fair-share weight of a tenant (null: the tasks without a tenant, always weight 1). */
export function effectiveTenantWeight(limits: LimitsSnapshot, tenantId: string | null): number {
  return (tenantId === null ? undefined : limits.tenantWeights[tenantId]) ?? DEFAULT_TENANT_WEIGHT;
}

export function effectiveConcurrencyKeyLimit(limits: LimitsSnapshot, key: string): number {
  return limits.concurrencyKeys[key] ?? DEFAULT_CONCURRENCY_KEY_LIMIT;
}

/**
 * GCRA (virtual scheduling) for a provider rate of `qps` per second with `burst` at once:
 * at most `burst + qps * t / 1000` submits start in any interval of t ms.
 * `tat` is the theoretical arrival time kept by the store (ms, may be fractional; 0 = fresh).
 */
export interface GcraDecision {
  allowed: boolean;
  /** The new TAT to store when allowed. */
  tat: number;
  /** When refused: the earliest time a token is due. */
  retryAt: number;
}

export function gcra(tat: number, now: number, qps: number, burst: number): GcraDecision {
  const interval = 1000 / qps;
  const next = Math.max(tat, now) + interval;
  if (next - now <= burst * interval + 1e-9) return { allowed: true, tat: next, retryAt: now };
  return { allowed: false, tat, retryAt: next - burst * interval };
}

export function effectiveBurst(p: Pick<ProviderLimits, 'burst'>): number {
  return p.burst ?? 1;
}

/** Which limit refused a candidate; also the resource a parked lane waits on. */
export type RefusalReason = 'paused' | 'rate' | 'account' | 'tenant' | 'concurrencyKey';
