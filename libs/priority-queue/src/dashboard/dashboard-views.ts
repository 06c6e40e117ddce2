import { Inject, Injectable } from '@nestjs/common';
import {
  DEFAULT_CONCURRENCY_KEY_LIMIT,
  KEY_SEPARATOR,
  accountKey,
  effectiveAccountLimit,
  effectiveBurst,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  type LimitsSnapshot,
} from '../core/admission';
import { TaskNotFoundError } from '../core/errors';
import type { QueueStats } from '../core/task-store.port';
import type { TaskExplanation } from '../core/explain';
import type { TaskHistoryEntry } from '../core/history';
import { isRetryable } from '../core/requeue';
import { ALL_STATUSES, TaskStatus, isTerminal, type Task } from '../core/task';
import type { TaskQuery } from '../core/task-query';
import { BUCKET_MS, DashboardActivity, type ActivityBucket } from './activity';
import { DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './dashboard.options';
import { QueueSource, type DashboardQueue } from './queue-source';

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
  /**
   * 'history': the last `historyLimit` transitions the store kept (TaskManager.history);
   * 'off': the store keeps none (historyLimit 0, Redis's default): the times the task records.
   */
  timeline: { source: 'history' | 'off'; historyLimit: number; entries: TimelineEntry[] };
  /** Why a pending task is not running (TaskManager.explain); null for any other status. */
  explanation: (TaskExplanation & { keyLabel?: string }) | null;
  actions: { cancel: boolean; changePriority: boolean; retry: boolean };
}

/** How many pending tasks at the head of the queue the limits page explains. */
export const WAITING_SAMPLE = 50;
/** Explains in flight at once for the limits page (a SQL store's pool serves the workers too). */
const EXPLAIN_PARALLEL = 4;

export interface WaitingView {
  now: number;
  /** Due or not, the first pending tasks in claim order that were explained. */
  sampled: number;
  verdicts: Record<TaskExplanation['verdict'], number>;
  /** Per limit and key: how many of the sampled tasks it holds back, busiest first. */
  byLimit: Array<{ limit: string; key: string; tasks: number; inUse?: number; max?: number | null; nextTokenAt?: number }>;
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
      queues: this.source.all().map((q) => ({ name: q.name, taskTypes: q.taskTypes() })),
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

  /**
   * A page of tasks; a search looks in every status at once. In one status it finds at most two
   * tasks (one by id, one by idempotency key: core/task-query.ts searchPage).
   */
  async tasks(q: DashboardQueue, query: TaskQuery) {
    if (query.search !== undefined) {
      const { cursor: _c, ...rest } = query;
      const pages = await Promise.all(ALL_STATUSES.map((status) => q.tasks({ ...rest, status, limit: 2 })));
      return { order: 'newest' as const, nextCursor: null, tasks: pages.flatMap((p) => p.tasks).map(summary) };
    }
    const page = await q.tasks(query);
    return { order: page.order, nextCursor: page.nextCursor, tasks: page.tasks.map(summary) };
  }

  async task(q: DashboardQueue, task: Task): Promise<TaskDetail> {
    const { leaseId: _lease, ...shown } = task;
    const pending = task.status === TaskStatus.PENDING_SUBMIT;
    const historyOn = q.historyLimit > 0;
    const [history, explanation] = await Promise.all([historyOn ? q.history(task.id) : null, pending ? q.explain(task.id) : null]);
    const ro = this.options.readOnly;
    return {
      now: explanation?.now ?? Date.now(),
      task: shown,
      timeline: history
        ? { source: 'history', historyLimit: q.historyLimit, entries: history.map(historyEntry) }
        : { source: 'off', historyLimit: 0, entries: timelineFromFields(task) },
      explanation: explanation && (explanation.refusedBy ? { ...explanation, keyLabel: keyLabel(explanation.refusedBy.key) } : explanation),
      actions: {
        cancel: !ro && !isTerminal(task.status) && !task.cancelRequested,
        changePriority: !ro && pending,
        retry: !ro && isRetryable(task.status),
      },
    };
  }

  /**
   * Which limits hold back the head of the queue: TaskManager.explain of the first WAITING_SAMPLE
   * pending tasks in claim order, counted per limit and key (its lanes waiting on it).
   */
  async waiting(q: DashboardQueue): Promise<WaitingView> {
    const head = await q.tasks({ status: TaskStatus.PENDING_SUBMIT, limit: WAITING_SAMPLE });
    // EXPLAIN_PARALLEL at a time: the workers share the store's connections with this page
    const explained: Array<TaskExplanation | null> = [];
    for (let i = 0; i < head.tasks.length; i += EXPLAIN_PARALLEL) {
      const batch = head.tasks.slice(i, i + EXPLAIN_PARALLEL);
      explained.push(...(await Promise.all(batch.map((t) => q.explain(t.id).catch(goneIsNull))))); // null: purged meanwhile
    }
    const verdicts: WaitingView['verdicts'] = { 'not-pending': 0, 'not-due': 0, refused: 0, waiting: 0, next: 0 };
    const byLimit = new Map<string, WaitingView['byLimit'][number]>();
    let now = Date.now();
    for (const e of explained) {
      if (!e) continue;
      now = e.now;
      verdicts[e.verdict]++;
      const r = e.refusedBy;
      if (!r) continue;
      const k = `${r.limit}\u0000${r.key}`;
      const row = byLimit.get(k) ?? { limit: r.limit, key: keyLabel(r.key), tasks: 0 };
      row.tasks++;
      if (r.inUse !== undefined) row.inUse = r.inUse;
      if (r.max !== undefined) row.max = r.max;
      if (r.nextTokenAt !== undefined) row.nextTokenAt = r.nextTokenAt;
      byLimit.set(k, row);
    }
    return { now, sampled: head.tasks.length, verdicts, byLimit: [...byLimit.values()].sort((a, b) => b.tasks - a.tasks) };
  }
}

function goneIsNull(e: unknown): null {
  if (e instanceof TaskNotFoundError) return null;
  throw e;
}

/** An admission key as people read it: provider / account instead of the internal separator. */
function keyLabel(key: string): string {
  return key.split(KEY_SEPARATOR).join(' / ');
}

const TRANSITION_LABELS: Record<string, string> = {
  'null>PENDING_SUBMIT': 'created',
  'PENDING_SUBMIT>SUBMITTING': 'claimed by a worker',
  'SUBMITTING>PENDING_SUBMIT': 'back in the queue (retry or lease lost)',
  'SUBMITTING>SUBMITTED': 'accepted by the provider',
  'SUBMITTING>RUNNING': 'accepted by the provider',
  'SUBMITTED>RUNNING': 'running at the provider',
  'PENDING_SUBMIT>CANCELED': 'canceled while waiting',
  'PENDING_SUBMIT>TIMED_OUT': 'deadline passed while waiting',
};

function historyEntry(e: TaskHistoryEntry): TimelineEntry {
  const label = TRANSITION_LABELS[`${e.from}>${e.to}`] ?? (e.to === TaskStatus.PENDING_SUBMIT && e.from && isTerminal(e.from) ? 'retried from the dashboard or the API' : '');
  return { at: e.at, label, from: e.from, to: e.to, ...(e.error ? { error: e.error } : {}) };
}

export function summary(t: Task): TaskSummary {
  const { payload: _p, result: _r, leaseId: _l, ...rest } = t;
  if (rest.error && rest.error.length > ERROR_PREVIEW) rest.error = rest.error.slice(0, ERROR_PREVIEW) + '…';
  return rest;
}

/** History off: the times the task itself records (a retry resets attempts: it looks delayed). */
function timelineFromFields(t: Task): TimelineEntry[] {
  const out: TimelineEntry[] = [{ at: t.createdAt, label: 'created', to: TaskStatus.PENDING_SUBMIT }];
  if (t.runAt > t.createdAt) out.push({ at: t.runAt, label: t.attempts > 0 ? 'due again (backoff)' : 'due (delayed or retried)' });
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
