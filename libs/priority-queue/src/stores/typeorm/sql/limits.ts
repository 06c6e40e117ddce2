import { accountKey, emptyLimits, KEY_SEPARATOR, type LimitsSnapshot, type LimitUpdate } from '../../../core/admission';
import { tenantKeyOf } from '../../../core/fairness';
import { q, run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { rk } from '../rows';
import { unparkAll } from './apply-releases';
import { allResources, loadResources, writeResources, type Resource } from './resources';
import { raw, sql } from './sql';

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
  const s = snapshotOf(await allResources(x, c));
  if (c.fair) s.tenantWeights = await readTenantWeights(x, c);
  return s;
}

/** The queue's tenant weights (DESIGN §7; only a queue with fairness has any). */
async function readTenantWeights(x: Exec, c: StoreContext): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const r of await q(x, sql`SELECT tenant_key, weight FROM ${raw(c.t.tenantWeights)} WHERE queue = ${c.queue} ORDER BY tenant_key`)) {
    out[String(r.tenant_key)] = Number(r.weight);
  }
  return out;
}

/**
 * setLimits({ kind: 'tenantWeight' }) on a queue with fairness: upserts (null: deletes) the
 * tenant's row of `<prefix>tenant_weights`. It applies to tasks created afterwards (creates read
 * the weights of their tenants in their own transaction, sql/fair-tags.ts), so it needs no queue
 * lock. Locks: the weight row.
 */
export async function setTenantWeight(c: StoreContext, u: Extract<LimitUpdate, { kind: 'tenantWeight' }>): Promise<LimitsSnapshot> {
  return c.db.tx(async (x) => {
    const W = raw(c.t.tenantWeights);
    const key = tenantKeyOf(u.tenantId);
    if (u.weight === null) await run(x, sql`DELETE FROM ${W} WHERE queue = ${c.queue} AND tenant_key = ${key}`);
    else {
      await run(
        x,
        sql`INSERT INTO ${W} (queue, tenant_key, weight) VALUES (${c.queue}, ${key}, ${u.weight}) ${raw(c.d.onConflictUpdate(['queue', 'tenant_key'], ['weight']))}`,
      );
    }
    return readLimits(x, c);
  });
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

/** A NOTIFY of the queue's wake channel; payload SUBMISSIONS_WAKE for a create (names.ts). */
export function notifyArgs(c: StoreContext, payload = ''): [string, unknown[]] {
  const s = sql`SELECT pg_notify(${c.channel}, ${payload})`;
  return [s.text, [...s.params]];
}
