import type { LimitUpdate, LimitsSnapshot } from './admission';
import type { TaskStore } from './task-store.port';
import { validateLimitUpdate } from './validation';

/**
 * Reads and changes the admission limits held by the store (DESIGN §3). Every change is
 * validated first; a bad value throws ValidationError and changes nothing.
 */
export class AdmissionControl {
  constructor(private readonly store: TaskStore) {}

  getLimits(): Promise<LimitsSnapshot> {
    return this.store.getLimits();
  }

  async apply(update: LimitUpdate): Promise<LimitsSnapshot> {
    validateLimitUpdate(update);
    return this.store.setLimits(update);
  }

  pause(providerKey: string): Promise<LimitsSnapshot> {
    return this.apply({ kind: 'provider', providerKey, paused: true });
  }

  resume(providerKey: string): Promise<LimitsSnapshot> {
    return this.apply({ kind: 'provider', providerKey, paused: false });
  }

  setProviderRate(providerKey: string, qps: number | null, burst?: number | null): Promise<LimitsSnapshot> {
    return this.apply({ kind: 'provider', providerKey, qps, ...(burst !== undefined ? { burst } : {}) });
  }

  setAccountConcurrency(providerKey: string, accountId: string | null, concurrency: number | null): Promise<LimitsSnapshot> {
    return accountId === null
      ? this.apply({ kind: 'provider', providerKey, accountConcurrency: concurrency })
      : this.apply({ kind: 'account', providerKey, accountId, concurrency });
  }

  setTenantQuota(tenantId: string | null, quota: number | null): Promise<LimitsSnapshot> {
    return tenantId === null ? this.apply({ kind: 'defaultTenant', quota }) : this.apply({ kind: 'tenant', tenantId, quota });
  }

  setConcurrencyKeyLimit(key: string, limit: number | null): Promise<LimitsSnapshot> {
    return this.apply({ kind: 'concurrencyKey', key, limit });
  }

  /** Fair-share weight of a tenant (1..1000, null = back to 1); for tasks created from now on. */
  setTenantWeight(tenantId: string, weight: number | null): Promise<LimitsSnapshot> {
    return this.apply({ kind: 'tenantWeight', tenantId, weight });
  }
}
