import type { LimitsSnapshot, QueueStats } from 'nestjs-priority-queue';
import type { TenantConfig, VendorName } from '../config/demo-config';
import { priorityLevelName } from '../priority/priority-level';
import { reindexKey } from '../work/work-submitter';

/** The whole queue, for operators (GET /admin/queue/stats): every tenant, account and key. */
export function queueView(s: QueueStats, limits: LimitsSnapshot) {
  return {
    now: s.now,
    byStatus: s.byStatus,
    pending: s.pending.map((p) => ({ ...p, level: priorityLevelName(p.priority) })),
    inFlight: {
      byVendor: s.inFlightByProvider,
      byAccount: s.inFlightByAccount,
      byTenant: s.inFlightByTenant,
      byConcurrencyKey: s.inFlightByConcurrencyKey,
    },
    pausedVendors: Object.entries(limits.providers)
      .filter(([, p]) => p.paused)
      .map(([name]) => name),
  };
}

/**
 * What one tenant may see (GET /queue/stats with its API key): its own work in flight against its
 * quota, its vendor account's jobs against the account limit, its re-index flow, and whether the
 * vendor of its plan is paused. Nothing of other tenants: no ids, counts or account ids.
 */
export function tenantQueueView(tenant: TenantConfig, vendor: VendorName, s: QueueStats, limits: LimitsSnapshot) {
  const provider = limits.providers[vendor];
  const account = s.inFlightByAccount.find((a) => a.providerKey === vendor && a.accountId === tenant.vendorAccount);
  const accountOverride = Object.values(limits.accounts).find((a) => a.providerKey === vendor && a.accountId === tenant.vendorAccount);
  const quota = limits.tenants[tenant.id] ?? limits.defaultTenantQuota;
  return {
    now: s.now,
    tenant: { id: tenant.id, plan: tenant.plan },
    inFlight: { tasks: s.inFlightByTenant[tenant.id] ?? 0, quota },
    vendor: {
      name: vendor,
      paused: provider?.paused ?? false,
      account: tenant.vendorAccount,
      jobsInFlight: account?.count ?? 0,
      jobLimit: accountOverride?.concurrency ?? provider?.accountConcurrency ?? null,
    },
    reindexRunning: (s.inFlightByConcurrencyKey[reindexKey(tenant.id)] ?? 0) > 0,
  };
}
