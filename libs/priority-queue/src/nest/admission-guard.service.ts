import { Inject, Injectable } from '@nestjs/common';
import type { LimitUpdate, LimitsSnapshot } from '../core/admission';
import { AdmissionControl } from '../core/admission-control';
import type { TaskStore } from '../core/task-store.port';
import { PRIORITY_QUEUE_STORE } from './priority-queue.constants';

/**
 * Reads and changes admission limits at runtime. They live in the store, so a change applies to
 * every worker process at its next claim.
 */
@Injectable()
export class AdmissionGuard {
  private readonly control: AdmissionControl;

  constructor(@Inject(PRIORITY_QUEUE_STORE) store: TaskStore) {
    this.control = new AdmissionControl(store);
  }

  getLimits(): Promise<LimitsSnapshot> {
    return this.control.getLimits();
  }

  setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    return this.control.apply(update);
  }

  pause(providerKey: string): Promise<LimitsSnapshot> {
    return this.control.pause(providerKey);
  }

  resume(providerKey: string): Promise<LimitsSnapshot> {
    return this.control.resume(providerKey);
  }

  setProviderRate(providerKey: string, qps: number | null, burst?: number | null): Promise<LimitsSnapshot> {
    return this.control.setProviderRate(providerKey, qps, burst);
  }

  /** accountId null sets the provider's default for every account. */
  setAccountConcurrency(providerKey: string, accountId: string | null, concurrency: number | null): Promise<LimitsSnapshot> {
    return this.control.setAccountConcurrency(providerKey, accountId, concurrency);
  }

  /** tenantId null sets the default quota of every tenant. */
  setTenantQuota(tenantId: string | null, quota: number | null): Promise<LimitsSnapshot> {
    return this.control.setTenantQuota(tenantId, quota);
  }

  setConcurrencyKeyLimit(key: string, limit: number | null): Promise<LimitsSnapshot> {
    return this.control.setConcurrencyKeyLimit(key, limit);
  }

  /**
   * Fair-share weight of a tenant (queues with fairness: 'tenant'): an integer from 1 to 1000,
   * null for the default 1. Tasks created from now on use it; getLimits() lists the weights.
   */
  setTenantWeight(tenantId: string, weight: number | null): Promise<LimitsSnapshot> {
    return this.control.setTenantWeight(tenantId, weight);
  }
}
