import { TaskStatus, type Task } from './task';

/**
 * DESIGN §7, deadline boost: `boost: { beforeDeadlineMs: W, priority: P }` per task type or per
 * submit. The pure rules every store applies; the Redis scripts mirror them (stores/redis/lua/
 * lib.lua `applyDueBoosts`).
 *
 * - A task keeps its boost as `boostAt = deadlineAt - W` and `boostPriority = P` (fixed at create).
 * - At the start of every claim at store time `now`, each boost with boostAt <= now that has not
 *   fired yet fires, in order of boostAt, then seq (compareBoosts): a task then PENDING_SUBMIT
 *   whose priority is below P takes P as a priority change (version + 1, re-tagged at P when
 *   fairness is on) and is reported in the claim's `boosted`; any other task is left as it is.
 *   Either way the boost has fired: a boost fires once. So a claim never sees a due boost
 *   unapplied, without any background job.
 * - A changePriority at or after boostAt fires the task's boost without effect first: the
 *   explicit priority wins (before boostAt the boost stays and fires later, if the new priority
 *   is below P).
 * - W >= the task's timeout puts boostAt at or before its creation: the task is created at
 *   max(priority, P) and keeps no boost (resolveBoost).
 */
export interface BoostOptions {
  /** W: the boost fires this long before the task's deadline (ms, integer >= 1). */
  beforeDeadlineMs: number;
  /** P: the priority the task takes then, when its own is lower (int32). */
  priority: number;
}

/** The priority a new task is created with and the boost it keeps (see the header). */
export function resolveBoost(priority: number, timeoutMs: number | null, boost: BoostOptions | null): { priority: number; boost: BoostOptions | null } {
  if (boost === null || timeoutMs === null) return { priority, boost: null };
  if (boost.beforeDeadlineMs >= timeoutMs) return { priority: Math.max(priority, boost.priority), boost: null };
  return { priority, boost };
}

/** boostAt of a task with this deadline (task.ts newTaskRecord and the stores compute the same). */
export function boostAtOf(deadlineAt: number, beforeDeadlineMs: number): number {
  return deadlineAt - beforeDeadlineMs;
}

/** Whether the task's boost is due at `now` (it fires at the first claim from then on). */
export function boostDue(t: Pick<Task, 'boostAt'>, now: number): boolean {
  return t.boostAt !== null && t.boostAt <= now;
}

/** The order in which due boosts fire: boostAt, then seq. Negative when a fires first. */
export function compareBoosts(a: Pick<Task, 'boostAt' | 'seq'>, b: Pick<Task, 'boostAt' | 'seq'>): number {
  return (a.boostAt ?? 0) - (b.boostAt ?? 0) || a.seq - b.seq;
}

/**
 * What a boost firing does to its task: the task's new priority, or null when it changes nothing
 * (the task is not PENDING_SUBMIT any more, or its priority is already P or above).
 */
export function boostedPriority(t: Pick<Task, 'status' | 'priority' | 'boostPriority'>): number | null {
  if (t.status !== TaskStatus.PENDING_SUBMIT || t.boostPriority === null || t.priority >= t.boostPriority) return null;
  return t.boostPriority;
}
