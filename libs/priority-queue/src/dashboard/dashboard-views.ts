import { Inject, Injectable } from '@nestjs/common';
import {
  DEFAULT_CONCURRENCY_KEY_LIMIT,
  accountKey,
  effectiveAccountLimit,
  effectiveBurst,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  type LimitsSnapshot,
} from '../core/admission';
import type { QueueStats } from '../core/task-store.port';
import { TaskStatus, isTerminal, type Task } from '../core/task';
import { BUCKET_MS, DashboardActivity, type ActivityBucket } from './activity';
import { DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './dashboard.options';
import { QueueSource, type DashboardQueue, type QueueCapabilities, type TaskPageQuery } from './queue-source';

/**
 * The JSON the page reads: what the queue API returns, shaped per page (overview, limits,
 * tasks, one task). No logic of the queue is repeated here: limits come from AdmissionGuard,
 * counts from stats(), order from the store.
 */

/** Rows per limits table; the busiest come first, the rest are counted. */
export const MAX_LIMIT_ROWS = 500;
/** Leases scanned to list the workers holding tasks now. */
const LEASE_SCAN = 500;
const ERROR_PREVIEW = 300;

export interface QueueOverview {
  name: string;
  now: number;
  capabilities: QueueCapabilities;
  byStatus: QueueStats['byStatus'];
  pending: QueueStats['pending'];
  inFlight: number;
  throughput: { bucketMs: number; scope: 'process'; buckets: ActivityBucket[] };
  workers: Array<{ owner: string; leases: number; lastSeenAt: number | null }>;
  /** More tasks were SUBMITTING than the LEASE_SCAN read: `leases` count the first ones only. */
  leaseScanCapped: boolean;
}

export interface LimitRow {
  key: string;
  inFlight: number;
  limit: number | null;
  /** The limit is set for this key itself, not inherited from a default. */
  override: boolean;
  full: boolean;
}

export interface LimitsView {
  now: number;
  providers: Array<{ providerKey: string; paused: boolean; qps: number | null; burst: number | null; effectiveBurst: number | null; accountConcurrency: number | null; inFlight: number }>;
  accounts: { rows: Array<LimitRow & { providerKey: string; accountId: string }>; more: number };
  tenants: { defaultQuota: number | null; rows: LimitRow[]; more: number };
  concurrencyKeys: { defaultLimit: number; rows: LimitRow[]; more: number };
}

export type TaskSummary = Omit<Task, 'payload' | 'result' | 'leaseId'>;

export interface TimelineEntry {
  at: number;
  label: string;
  from?: string | null;
  to?: string;
  error?: string | null;
}

export interface TaskDetail {
  now: number;
  task: Omit<Task, 'leaseId'>;
  /** 'history': transitions kept by the store; 'fields': read from the task's own times. */
  timeline: { source: 'history' | 'fields'; entries: TimelineEntry[] };
  actions: { cancel: boolean; changePriority: boolean; retry: boolean };
}

@Injectable()
export class DashboardViews {
  constructor(
    private readonly source: QueueSource,
    private readonly activity: DashboardActivity,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  meta() {
    return {
      title: this.options.title,
      readOnly: this.options.readOnly,
      refreshMs: this.options.refreshMs,
      statuses: Object.values(TaskStatus),
      queues: this.source.all().map((q) => ({ name: q.name, capabilities: q.capabilities, taskTypes: q.taskTypes() })),
    };
  }

  async overview(q: DashboardQueue): Promise<QueueOverview> {
    const [stats, leased] = await Promise.all([q.stats(), q.tasks({ status: TaskStatus.SUBMITTING, limit: LEASE_SCAN })]);
    const leases = new Map<string, number>();
    for (const t of leased.tasks) {
      if (t.leaseOwner && t.leaseUntil !== null && t.leaseUntil > stats.now) leases.set(t.leaseOwner, (leases.get(t.leaseOwner) ?? 0) + 1);
    }
    const seen = new Map(this.activity.workers(q.name).map((w) => [w.owner, w.lastSeenAt]));
    const owners = new Set([...leases.keys(), ...seen.keys()]);
    return {
      name: q.name,
      now: stats.now,
      capabilities: q.capabilities,
      byStatus: stats.byStatus,
      pending: stats.pending,
      inFlight: stats.byStatus.SUBMITTING + stats.byStatus.SUBMITTED + stats.byStatus.RUNNING,
      throughput: { bucketMs: BUCKET_MS, scope: 'process', buckets: this.activity.series(q.name) },
      workers: [...owners].sort().map((owner) => ({ owner, leases: leases.get(owner) ?? 0, lastSeenAt: seen.get(owner) ?? null })),
      leaseScanCapped: leased.nextCursor !== null,
    };
  }

  async limits(q: DashboardQueue): Promise<LimitsView> {
    const [stats, limits] = await Promise.all([q.stats(), q.getLimits()]);
    return limitsView(stats, limits, q.taskTypes().map((t) => t.providerKey));
  }

  async tasks(q: DashboardQueue, query: TaskPageQuery) {
    const page = await q.tasks(query);
    return { order: page.order, nextCursor: page.nextCursor, tasks: page.tasks.map(summary) };
  }

  async task(q: DashboardQueue, task: Task): Promise<TaskDetail> {
    const { leaseId: _lease, ...shown } = task;
    const now = Date.now();
    return {
      now,
      task: shown,
      timeline: { source: 'fields', entries: timelineFromFields(task) },
      actions: {
        cancel: !this.options.readOnly && !isTerminal(task.status) && !task.cancelRequested,
        changePriority: !this.options.readOnly && task.status === TaskStatus.PENDING_SUBMIT,
        retry: false,
      },
    };
  }
}

export function summary(t: Task): TaskSummary {
  const { payload: _p, result: _r, leaseId: _l, ...rest } = t;
  if (rest.error && rest.error.length > ERROR_PREVIEW) rest.error = rest.error.slice(0, ERROR_PREVIEW) + '…';
  return rest;
}

/** Without a kept history: the times the task itself records. */
function timelineFromFields(t: Task): TimelineEntry[] {
  const out: TimelineEntry[] = [{ at: t.createdAt, label: 'created', to: TaskStatus.PENDING_SUBMIT }];
  if (t.runAt > t.createdAt) out.push({ at: t.runAt, label: t.attempts > 0 ? 'due again (retry)' : 'due (delayed)' });
  if (t.finishedAt !== null) out.push({ at: t.finishedAt, label: 'finished', to: t.status, error: t.error });
  else if (t.updatedAt > t.createdAt) out.push({ at: t.updatedAt, label: `last change (now ${t.status})`, to: t.status });
  return out.sort((a, b) => a.at - b.at);
}

function row(key: string, inFlight: number, limit: number | null, override: boolean): LimitRow {
  return { key, inFlight, limit, override, full: limit !== null && inFlight >= limit };
}

/** Busiest first (full, then by share of the limit, then by count), capped at MAX_LIMIT_ROWS. */
function capped<T extends LimitRow>(rows: T[]): { rows: T[]; more: number } {
  const share = (r: LimitRow) => (r.limit === null ? 0 : r.limit === 0 ? Infinity : r.inFlight / r.limit);
  rows.sort((a, b) => Number(b.full) - Number(a.full) || share(b) - share(a) || b.inFlight - a.inFlight || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { rows: rows.slice(0, MAX_LIMIT_ROWS), more: Math.max(0, rows.length - MAX_LIMIT_ROWS) };
}

/** `knownProviders`: the providers of the task types this process knows, shown even when idle. */
export function limitsView(stats: QueueStats, limits: LimitsSnapshot, knownProviders: readonly string[] = []): LimitsView {
  const providerKeys = new Set([...knownProviders, ...Object.keys(limits.providers), ...Object.keys(stats.inFlightByProvider)]);
  const providers = [...providerKeys].sort().map((providerKey) => {
    const p = limits.providers[providerKey];
    return {
      providerKey,
      paused: p?.paused ?? false,
      qps: p?.qps ?? null,
      burst: p?.burst ?? null,
      effectiveBurst: p && p.qps !== null ? effectiveBurst(p) : null,
      accountConcurrency: p?.accountConcurrency ?? null,
      inFlight: stats.inFlightByProvider[providerKey] ?? 0,
    };
  });

  const accounts = new Map<string, { providerKey: string; accountId: string; inFlight: number }>();
  for (const a of stats.inFlightByAccount) accounts.set(JSON.stringify([a.providerKey, a.accountId]), { providerKey: a.providerKey, accountId: a.accountId, inFlight: a.count });
  for (const o of Object.values(limits.accounts)) {
    const k = JSON.stringify([o.providerKey, o.accountId]);
    if (!accounts.has(k)) accounts.set(k, { providerKey: o.providerKey, accountId: o.accountId, inFlight: 0 });
  }
  const accountRows = [...accounts.values()].map((a) => {
    const override = limits.accounts[accountKey(a.providerKey, a.accountId)] !== undefined;
    return { ...row(`${a.providerKey} / ${a.accountId}`, a.inFlight, effectiveAccountLimit(limits, a.providerKey, a.accountId), override), providerKey: a.providerKey, accountId: a.accountId };
  });

  const tenantKeys = new Set([...Object.keys(stats.inFlightByTenant), ...Object.keys(limits.tenants)]);
  const tenantRows = [...tenantKeys].map((t) => row(t, stats.inFlightByTenant[t] ?? 0, effectiveTenantQuota(limits, t), limits.tenants[t] !== undefined));

  const ckKeys = new Set([...Object.keys(stats.inFlightByConcurrencyKey), ...Object.keys(limits.concurrencyKeys)]);
  const ckRows = [...ckKeys].map((k) => row(k, stats.inFlightByConcurrencyKey[k] ?? 0, effectiveConcurrencyKeyLimit(limits, k), limits.concurrencyKeys[k] !== undefined));

  return {
    now: stats.now,
    providers,
    accounts: capped(accountRows),
    tenants: { defaultQuota: limits.defaultTenantQuota, ...capped(tenantRows) },
    concurrencyKeys: { defaultLimit: DEFAULT_CONCURRENCY_KEY_LIMIT, ...capped(ckRows) },
  };
}
