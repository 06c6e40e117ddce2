import { accountKey, emptyLimits, KEY_SEPARATOR, type LimitsSnapshot, type LimitUpdate } from '../../../core/admission';
import type { StoreContext } from '../context';
import type { Exec } from '../db';
import { rk } from '../rows';
import { unparkAll } from './apply-releases';
import { allResources, loadResources, writeResources, type Resource } from './resources';
import { sql } from './sql';

export function snapshotOf(resources: readonly Resource[]): LimitsSnapshot {
  const s = emptyLimits();
  for (const r of resources) {
    const kind = r.rkey.slice(0, 2);
    const key = r.rkey.slice(2);
    if (kind === 'p:' && r.configured) {
      s.providers[key] = { paused: r.paused, qps: r.qps, burst: r.burst, accountConcurrency: r.accountConcurrency };
    } else if (kind === 'a:' && r.limit !== null) {
      const i = key.indexOf(KEY_SEPARATOR);
      const providerKey = key.slice(0, i);
      const accountId = key.slice(i + 1);
      s.accounts[accountKey(providerKey, accountId)] = { providerKey, accountId, concurrency: r.limit };
    } else if (kind === 't:' && r.limit !== null) s.tenants[key] = r.limit;
    else if (kind === 'd:') s.defaultTenantQuota = r.limit;
    else if (kind === 'c:' && r.limit !== null) s.concurrencyKeys[key] = r.limit;
  }
  return s;
}

export async function readLimits(x: Exec, c: StoreContext): Promise<LimitsSnapshot> {
  return snapshotOf(await allResources(x, c));
}

/**
 * setLimits: under the queue lock (so no claim is between reading a limit and parking a lane
 * on it), writes the resource row and puts every parked lane of the queue back in the ready
 * set: whatever changed, the next claim re-checks them. PostgreSQL also NOTIFYs idle workers.
 */
export async function setLimits(c: StoreContext, u: Exclude<LimitUpdate, { kind: 'tenantWeight' }>): Promise<LimitsSnapshot> {
  return c.db.tx(
    async (x) => {
      const cache = new Map<string, Resource>();
      const key =
        u.kind === 'provider'
          ? rk.provider(u.providerKey)
          : u.kind === 'account'
            ? rk.account(u.providerKey, u.accountId)
            : u.kind === 'tenant'
              ? rk.tenant(u.tenantId)
              : u.kind === 'defaultTenant'
                ? rk.defaultTenant()
                : rk.concurrencyKey(u.key);
      await loadResources(x, c, cache, [key]);
      const r = cache.get(key)!;
      switch (u.kind) {
        case 'provider':
          r.configured = true;
          if (u.paused !== undefined) r.paused = u.paused;
          if (u.qps !== undefined) r.qps = u.qps;
          if (u.burst !== undefined) r.burst = u.burst;
          if (u.accountConcurrency !== undefined) r.accountConcurrency = u.accountConcurrency;
          break;
        case 'account':
          r.limit = u.concurrency;
          break;
        case 'tenant':
        case 'defaultTenant':
          r.limit = u.quota;
          break;
        case 'concurrencyKey':
          r.limit = u.limit;
          break;
      }
      r.dirty = true;
      await writeResources(x, c, [r], false);
      await unparkAll(x, c);
      if (c.d.kind === 'postgres') await x.rows(...notifyArgs(c));
      return readLimits(x, c);
    },
    { queueLock: true },
  );
}

export function notifyArgs(c: StoreContext): [string, unknown[]] {
  const s = sql`SELECT pg_notify(${c.channel}, '')`;
  return [s.text, [...s.params]];
}
