import { Injectable } from '@nestjs/common';
import { PriorityQueueRegistry, type QueueStats, type Task, type TaskManager } from 'nestjs-priority-queue';

/**
 * The demo's view across its queues, for the routes that do not care which queue a task is in:
 * a task by id, and the stats of every queue added up.
 */
@Injectable()
export class QueueDirectory {
  constructor(private readonly queues: PriorityQueueRegistry) {}

  /** The task and the manager of its queue, or null. */
  async find(id: string): Promise<{ task: Task; manager: TaskManager } | null> {
    for (const name of this.queues.names()) {
      const manager = this.queues.taskManager(name);
      const task = await manager.get(id);
      if (task) return { task, manager };
    }
    return null;
  }

  /** Every queue's stats added up (pending per priority, in flight per provider, account, tenant, key). */
  async stats(): Promise<QueueStats> {
    const all = await Promise.all(this.queues.names().map((n) => this.queues.taskManager(n).stats()));
    const out: QueueStats = { ...all[0], byStatus: { ...all[0].byStatus }, pending: [], inFlightByProvider: {}, inFlightByAccount: [], inFlightByTenant: {}, inFlightByConcurrencyKey: {} };
    for (const k of Object.keys(out.byStatus) as Array<keyof QueueStats['byStatus']>) out.byStatus[k] = all.reduce((n, s) => n + s.byStatus[k], 0);
    const pending = new Map<number, { priority: number; count: number; oldestWaitMs: number }>();
    const accounts = new Map<string, { providerKey: string; accountId: string; count: number }>();
    for (const s of all) {
      for (const p of s.pending) {
        const e = pending.get(p.priority) ?? { priority: p.priority, count: 0, oldestWaitMs: 0 };
        pending.set(p.priority, { priority: p.priority, count: e.count + p.count, oldestWaitMs: Math.max(e.oldestWaitMs, p.oldestWaitMs) });
      }
      add(out.inFlightByProvider, s.inFlightByProvider);
      add(out.inFlightByTenant, s.inFlightByTenant);
      add(out.inFlightByConcurrencyKey, s.inFlightByConcurrencyKey);
      for (const a of s.inFlightByAccount) {
        const key = `${a.providerKey}\u0000${a.accountId}`;
        const e = accounts.get(key);
        accounts.set(key, { ...a, count: (e?.count ?? 0) + a.count });
      }
    }
    out.pending = [...pending.values()].sort((a, b) => b.priority - a.priority);
    out.inFlightByAccount = [...accounts.values()];
    return out;
  }
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
}
