import {
  accountKey,
  effectiveAccountLimit,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  emptyProviderLimits,
  type LimitUpdate,
  type LimitsSnapshot,
} from '../../core/admission';

/** Applies one (validated) LimitUpdate to a snapshot in place. */
export function applyLimitUpdate(limits: LimitsSnapshot, u: LimitUpdate): void {
  switch (u.kind) {
    case 'provider': {
      const p = (limits.providers[u.providerKey] ??= emptyProviderLimits());
      if (u.paused !== undefined) p.paused = u.paused;
      if (u.qps !== undefined) p.qps = u.qps;
      if (u.burst !== undefined) p.burst = u.burst;
      if (u.accountConcurrency !== undefined) p.accountConcurrency = u.accountConcurrency;
      return;
    }
    case 'account': {
      const key = accountKey(u.providerKey, u.accountId);
      if (u.concurrency === null) delete limits.accounts[key];
      else limits.accounts[key] = { providerKey: u.providerKey, accountId: u.accountId, concurrency: u.concurrency };
      return;
    }
    case 'tenant':
      if (u.quota === null) delete limits.tenants[u.tenantId];
      else limits.tenants[u.tenantId] = u.quota;
      return;
    case 'defaultTenant':
      limits.defaultTenantQuota = u.quota;
      return;
    case 'concurrencyKey':
      if (u.limit === null) delete limits.concurrencyKeys[u.key];
      else limits.concurrencyKeys[u.key] = u.limit;
      return;
    case 'tenantWeight':
      if (u.weight === null) delete limits.tenantWeights[u.tenantId];
      else limits.tenantWeights[u.tenantId] = u.weight;
      return;
  }
}

export function cloneLimits(l: LimitsSnapshot): LimitsSnapshot {
  const providers: LimitsSnapshot['providers'] = {};
  for (const [k, p] of Object.entries(l.providers)) providers[k] = { ...p };
  const accounts: LimitsSnapshot['accounts'] = {};
  for (const [k, a] of Object.entries(l.accounts)) accounts[k] = { ...a };
  return {
    providers,
    accounts,
    tenants: { ...l.tenants },
    defaultTenantQuota: l.defaultTenantQuota,
    concurrencyKeys: { ...l.concurrencyKeys },
    tenantWeights: { ...l.tenantWeights },
  };
}

export { effectiveAccountLimit, effectiveConcurrencyKeyLimit, effectiveTenantQuota };
