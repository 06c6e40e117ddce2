import { ALL_STATUSES, TaskStatus } from '../../../core/task';
import type { QueueStats } from '../../../core/task-store.port';
import { q, type StoreContext } from '../context';
import { num } from '../rows';
import { tasksInStatuses } from './by-status';
import { sql } from './sql';

/** stats: three aggregate reads in one snapshot-free transaction (not a hot path). */
export async function stats(c: StoreContext): Promise<QueueStats> {
  return c.db.tx(async (x) => {
    const now = await c.now(x);
    const counts = Object.fromEntries(ALL_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    for (const r of await q(x, sql`SELECT status, COUNT(*) AS n FROM ${tasksInStatuses(c, ALL_STATUSES, 'status')} GROUP BY status`)) {
      counts[String(r.status) as TaskStatus] = num(r.n);
    }
    const pending = (
      await q(
        x,
        sql`SELECT priority, COUNT(*) AS n, MIN(CASE WHEN run_at <= ${now} THEN run_at END) AS m
          FROM ${tasksInStatuses(c, [TaskStatus.PENDING_SUBMIT], 'priority, run_at')} GROUP BY priority`,
      )
    )
      .map((r) => ({ priority: num(r.priority), count: num(r.n), oldestWaitMs: r.m === null || r.m === undefined ? 0 : now - num(r.m) }))
      .sort((a, b) => b.priority - a.priority);
    const out: QueueStats = {
      now,
      byStatus: counts,
      pending,
      inFlightByProvider: {},
      inFlightByAccount: [],
      inFlightByTenant: {},
      inFlightByConcurrencyKey: {},
    };
    const live = await q(
      x,
      sql`SELECT provider_key, account_id, tenant_id, concurrency_key, COUNT(*) AS n
        FROM ${tasksInStatuses(c, [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING], 'provider_key, account_id, tenant_id, concurrency_key')}
        GROUP BY provider_key, account_id, tenant_id, concurrency_key`,
    );
    const accounts = new Map<string, { providerKey: string; accountId: string; count: number }>();
    for (const r of live) {
      const n = num(r.n);
      const p = String(r.provider_key);
      out.inFlightByProvider[p] = (out.inFlightByProvider[p] ?? 0) + n;
      if (r.account_id !== null && r.account_id !== undefined) {
        const a = String(r.account_id);
        const k = JSON.stringify([p, a]);
        const cur = accounts.get(k) ?? { providerKey: p, accountId: a, count: 0 };
        cur.count += n;
        accounts.set(k, cur);
      }
      if (r.tenant_id !== null && r.tenant_id !== undefined) {
        const t = String(r.tenant_id);
        out.inFlightByTenant[t] = (out.inFlightByTenant[t] ?? 0) + n;
      }
      if (r.concurrency_key !== null && r.concurrency_key !== undefined) {
        const k = String(r.concurrency_key);
        out.inFlightByConcurrencyKey[k] = (out.inFlightByConcurrencyKey[k] ?? 0) + n;
      }
    }
    out.inFlightByAccount = [...accounts.values()].sort(
      (a, b) => (a.providerKey < b.providerKey ? -1 : a.providerKey > b.providerKey ? 1 : a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0),
    );
    return out;
  });
}
