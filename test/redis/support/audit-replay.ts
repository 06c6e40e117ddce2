import { compareOrder, laneKey, type LimitUpdate, type Task } from '../../../libs/priority-queue/src/core';

/**
 * Replays the audit log of a multi-process run against the limits it ran under (DESIGN §3) and
 * the order (DESIGN §2). Times are store times (ms). At equal times a finish is applied before a
 * start: a store that is right never looks wrong that way.
 */
export interface RunLimits {
  /** providerKey -> GCRA rate */
  rate: Record<string, { qps: number; burst: number }>;
  /** slot limit of a resource ('a:provider:account', 't:tenant', 'c:key'), or null = none */
  slotLimit(resource: string): number | null;
  /** providerKey -> store time it was resumed (paused before) */
  pausedUntil?: Record<string, number>;
}

export function resourcesOf(t: Pick<Task, 'providerKey' | 'accountId' | 'tenantId' | 'concurrencyKey'>): string[] {
  const r: string[] = [];
  if (t.accountId !== null) r.push(`a:${t.providerKey}:${t.accountId}`);
  if (t.tenantId !== null) r.push(`t:${t.tenantId}`);
  if (t.concurrencyKey !== null) r.push(`c:${t.concurrencyKey}`);
  return r;
}

/**
 * RunLimits.slotLimit of a run that applied these limit updates in order (DESIGN §3): an account's
 * own concurrency, else its provider's accountConcurrency; a tenant's quota, else the default
 * tenant quota; a concurrency key's limit, else 1.
 */
export function slotLimitOf(updates: readonly LimitUpdate[]): RunLimits['slotLimit'] {
  const accounts = new Map<string, number | null>();
  const perProvider = new Map<string, number | null>();
  const tenants = new Map<string, number | null>();
  const keys = new Map<string, number | null>();
  let defaultTenant: number | null = null;
  for (const u of updates) {
    if (u.kind === 'provider' && u.accountConcurrency !== undefined) perProvider.set(u.providerKey, u.accountConcurrency);
    else if (u.kind === 'account') accounts.set(`${u.providerKey}:${u.accountId}`, u.concurrency);
    else if (u.kind === 'tenant') tenants.set(u.tenantId, u.quota);
    else if (u.kind === 'defaultTenant') defaultTenant = u.quota;
    else if (u.kind === 'concurrencyKey') keys.set(u.key, u.limit);
  }
  return (resource) => {
    const [kind, a, b] = resource.split(':');
    if (kind === 'a') return accounts.get(`${a}:${b}`) ?? perProvider.get(a) ?? null;
    if (kind === 't') return tenants.get(a) ?? defaultTenant;
    if (kind === 'c') return keys.get(a) ?? 1;
    return null;
  };
}

export interface Interval {
  task: Task;
  start: number;
  finish: number;
}

/** Per resource: the step function of slots in use: count after all events at times[i]. */
interface Timeline {
  times: number[];
  counts: number[];
}

function slotTimelines(intervals: readonly Interval[]): Map<string, Timeline> {
  const events = new Map<string, Array<{ time: number; delta: number }>>();
  for (const iv of intervals) {
    for (const r of resourcesOf(iv.task)) {
      let list = events.get(r);
      if (!list) events.set(r, (list = []));
      list.push({ time: iv.start, delta: +1 }, { time: iv.finish, delta: -1 });
    }
  }
  const out = new Map<string, Timeline>();
  for (const [r, list] of events) {
    list.sort((a, b) => a.time - b.time || a.delta - b.delta); // finishes first at a tie
    const tl: Timeline = { times: [], counts: [] };
    let count = 0;
    for (const e of list) {
      count += e.delta;
      const n = tl.times.length;
      if (n && tl.times[n - 1] === e.time) tl.counts[n - 1] = Math.max(tl.counts[n - 1], count);
      else {
        tl.times.push(e.time);
        tl.counts.push(count);
      }
    }
    out.set(r, tl);
  }
  return out;
}

/** Highest number of slots of one resource in use at once (finishes first at ties). */
export function peakUse(intervals: readonly Interval[]): Map<string, number> {
  const events = new Map<string, Array<{ time: number; delta: number }>>();
  for (const iv of intervals) {
    for (const r of resourcesOf(iv.task)) {
      let list = events.get(r);
      if (!list) events.set(r, (list = []));
      list.push({ time: iv.start, delta: +1 }, { time: iv.finish, delta: -1 });
    }
  }
  const peaks = new Map<string, number>();
  for (const [r, list] of events) {
    list.sort((a, b) => a.time - b.time || a.delta - b.delta);
    let count = 0;
    let peak = 0;
    for (const e of list) {
      count += e.delta;
      peak = Math.max(peak, count);
    }
    peaks.set(r, peak);
  }
  return peaks;
}

/** Rate violations: windows [s_i, s_j] holding more starts than burst + qps * (s_j - s_i) / 1000. */
export function rateViolations(startsByProvider: Map<string, number[]>, rate: RunLimits['rate']): string[] {
  const out: string[] = [];
  for (const [p, starts] of startsByProvider) {
    const lim = rate[p];
    if (!lim) continue;
    const s = [...starts].sort((a, b) => a - b);
    for (let j = 0; j < s.length && out.length < 10; j++) {
      for (let i = j; i >= 0; i--) {
        const allowed = lim.burst + (lim.qps * (s[j] - s[i])) / 1000 + 1e-6;
        if (j - i + 1 > allowed) {
          out.push(`${p}: ${j - i + 1} starts in [${s[i]}, ${s[j]}] (${s[j] - s[i]} ms), allowed ${allowed.toFixed(2)}`);
          break;
        }
        if (lim.qps * (s[j] - s[i]) > 1000 * (j + 1) + 1000) break; // no longer window can fail
      }
    }
  }
  return out;
}

/**
 * Order: for each start of X at time t, any other lane whose head Y (best task not started
 * before t) ranks before X, was still waiting at t + slackMs, and had every limit free during
 * the whole of [t - slackMs, t + slackMs] is a violation (a higher-ranked admissible task waited
 * longer than a claim round while X started).
 */
export function orderViolations(intervals: readonly Interval[], limits: RunLimits, slackMs: number, agingIntervalMs = 0): string[] {
  const timelines = slotTimelines(intervals);
  const startsByProvider = new Map<string, number[]>();
  for (const iv of intervals) {
    const l = startsByProvider.get(iv.task.providerKey) ?? [];
    l.push(iv.start);
    startsByProvider.set(iv.task.providerKey, l);
  }
  for (const l of startsByProvider.values()) l.sort((a, b) => a - b);
  const gcra = new Map<string, { times: number[]; tat: number[] }>();
  for (const [p, times] of startsByProvider) {
    const lim = limits.rate[p];
    if (!lim) continue;
    const interval = 1000 / lim.qps;
    let tat = 0;
    gcra.set(p, {
      times,
      tat: times.map((t) => (tat = Math.max(tat, t) + interval)),
    });
  }

  const lastAtOrBefore = (arr: readonly number[], t: number): number => {
    let lo = 0;
    let hi = arr.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] <= t) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  };

  const rateBlocked = (p: string, a: number, b: number): boolean => {
    const lim = limits.rate[p];
    const g = gcra.get(p);
    if (!lim || !g) return false;
    const interval = 1000 / lim.qps;
    const room = lim.burst * interval - interval + 1e-6;
    let i = lastAtOrBefore(g.times, a);
    if (i >= 0 && g.tat[i] - a > room) return true;
    for (i = i + 1; i < g.times.length && g.times[i] <= b; i++) if (g.tat[i] - g.times[i] > room) return true;
    return false;
  };

  const slotBlocked = (r: string, a: number, b: number): boolean => {
    const limit = limits.slotLimit(r);
    const tl = timelines.get(r);
    if (limit === null || !tl) return false;
    let i = lastAtOrBefore(tl.times, a);
    if (i >= 0 && tl.counts[i] >= limit) return true;
    for (i = i + 1; i < tl.times.length && tl.times[i] <= b; i++) if (tl.counts[i] >= limit) return true;
    return false;
  };

  const lanes = new Map<string, Interval[]>();
  for (const iv of intervals) {
    const k = laneKey(iv.task);
    const l = lanes.get(k) ?? [];
    l.push(iv);
    lanes.set(k, l);
  }
  const laneList = [...lanes.entries()].map(([key, l]) => ({
    key,
    tasks: l.sort((x, y) => compareOrder(x.task, y.task, agingIntervalMs)),
    ptr: 0,
  }));
  const out: string[] = [];
  // within a lane, starts follow the order
  for (const l of laneList) {
    for (let i = 1; i < l.tasks.length; i++) {
      if (l.tasks[i].start < l.tasks[i - 1].start && out.length < 10) {
        out.push(`lane ${l.key}: ${l.tasks[i].task.id} started before the better ${l.tasks[i - 1].task.id}`);
      }
    }
  }
  const byStart = [...intervals].sort((a, b) => a.start - b.start);
  for (const x of byStart) {
    const t = x.start;
    const xLane = laneKey(x.task);
    for (const l of laneList) {
      while (l.ptr < l.tasks.length && l.tasks[l.ptr].start < t) l.ptr++;
      if (l.key === xLane || l.ptr >= l.tasks.length) continue;
      const y = l.tasks[l.ptr];
      if (y.start <= t + slackMs) continue;
      if (compareOrder(y.task, x.task, agingIntervalMs) >= 0) continue;
      const a = t - slackMs;
      const b = t + slackMs;
      const paused = limits.pausedUntil?.[y.task.providerKey];
      if (paused !== undefined && a <= paused) continue;
      if (rateBlocked(y.task.providerKey, a, b)) continue;
      if (resourcesOf(y.task).some((r) => slotBlocked(r, a, b))) continue;
      if (out.length < 10) {
        out.push(`${x.task.id} (p${x.task.priority}) started at ${t} while ${y.task.id} (p${y.task.priority}, lane ${l.key}) was admissible and waited until ${y.start}`);
      }
    }
  }
  return out;
}
