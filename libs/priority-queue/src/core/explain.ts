import {
  accountKey,
  effectiveAccountLimit,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  emptyProviderLimits,
  laneKey,
  type LimitsSnapshot,
  type RefusalReason,
} from './admission';
import { laneRefusalReason, nextTokenAt, type LaneRoom, type SlotRoom } from './lane-admission';
import { Messages } from './messages';
import { TaskStatus, type Task } from './task';

/**
 * TaskStore.explain: why a task is not running now, decided with the admission rule of every
 * claim (the functions of admission.ts, checks in the order pause, rate, account, tenant,
 * concurrency key: DESIGN §3) over the store's current limits and in-use counts.
 *
 * Verdicts: `not-pending` (not PENDING_SUBMIT), `not-due` (runAt in the future: `dueAt`),
 * `refused` (a limit of its lane has no room: `refusedBy`), `waiting` (admissible, but `ahead`
 * due tasks of admissible lanes rank before it), `next` (the next claim takes it).
 */
export interface TaskExplanation {
  id: string;
  status: TaskStatus;
  now: number;
  verdict: 'not-pending' | 'not-due' | 'refused' | 'waiting' | 'next';
  /** One human sentence (core/messages.ts). */
  message: string;
  /** not-due: the task's runAt. */
  dueAt?: number;
  refusedBy?: LaneRefusal;
  /** waiting: due PENDING_SUBMIT tasks ranked before it whose lanes are admissible now, counted up to EXPLAIN_AHEAD_CAP. */
  ahead?: number;
  aheadCapped?: boolean;
}

/** The first limit of a lane without room, as explain reports it. */
export interface LaneRefusal {
  limit: RefusalReason;
  /** providerKey (paused, rate), providerKey + KEY_SEPARATOR + accountId (account), tenantId, concurrency key. */
  key: string;
  inUse?: number;
  max?: number | null;
  /** rate: when the next token is due (store clock, ms). */
  nextTokenAt?: number;
}

/** Most tasks `ahead` counts. */
export const EXPLAIN_AHEAD_CAP = 10_000;

/** The admission keys of a lane (DESIGN §3). */
export type AdmissionKeys = Pick<Task, 'providerKey' | 'accountId' | 'tenantId' | 'concurrencyKey'>;

/**
 * What a store knows of its admission state: limits, the GCRA theoretical arrival time per
 * provider and the slots in use per account (accountKey), tenant and concurrency key, as the
 * next claim would see them. Absent entries are 0.
 */
export interface AdmissionState {
  limits: LimitsSnapshot;
  tat: Readonly<Record<string, number>>;
  accounts: Readonly<Record<string, number>>;
  tenants: Readonly<Record<string, number>>;
  concurrencyKeys: Readonly<Record<string, number>>;
}

/**
 * DESIGN §3 for a lane head at `now` (the claim's rule, lane-admission.ts, over the snapshot):
 * the first limit without room in the order pause, rate, account, tenant, concurrency key, or
 * null when a claim would admit it.
 */
export function laneRefusal(lane: AdmissionKeys, s: AdmissionState, now: number): LaneRefusal | null {
  const p = s.limits.providers[lane.providerKey] ?? emptyProviderLimits();
  const account = lane.accountId === null ? null : accountKey(lane.providerKey, lane.accountId);
  const slot = (inUse: number | undefined, limit: number | null): SlotRoom => ({ inUse: inUse ?? 0, limit });
  const room: LaneRoom = {
    provider: { paused: p.paused, qps: p.qps, burst: p.burst, tat: s.tat[lane.providerKey] ?? 0 },
    account: account === null ? null : slot(s.accounts[account], effectiveAccountLimit(s.limits, lane.providerKey, lane.accountId!)),
    tenant: lane.tenantId === null ? null : slot(s.tenants[lane.tenantId], effectiveTenantQuota(s.limits, lane.tenantId)),
    concurrencyKey:
      lane.concurrencyKey === null ? null : slot(s.concurrencyKeys[lane.concurrencyKey], effectiveConcurrencyKeyLimit(s.limits, lane.concurrencyKey)),
  };
  const reason = laneRefusalReason(room, now);
  switch (reason) {
    case null:
      return null;
    case 'paused':
      return { limit: reason, key: lane.providerKey };
    case 'rate':
      return { limit: reason, key: lane.providerKey, nextTokenAt: Math.ceil(nextTokenAt(room.provider, now)) };
    case 'account':
      return { limit: reason, key: account!, inUse: room.account!.inUse, max: room.account!.limit };
    case 'tenant':
      return { limit: reason, key: lane.tenantId!, inUse: room.tenant!.inUse, max: room.tenant!.limit };
    case 'concurrencyKey':
      return { limit: reason, key: lane.concurrencyKey!, inUse: room.concurrencyKey!.inUse, max: room.concurrencyKey!.limit };
  }
}

/**
 * The explanation of `task` at store time `now`. `aheadOf(admissible)` counts the due
 * PENDING_SUBMIT tasks ranked before the task (DESIGN §2 order) in the lanes `admissible`
 * accepts, up to `cap`; it is called only when the task itself is admissible.
 */
export async function explainTask(
  task: Task,
  now: number,
  state: AdmissionState,
  aheadOf: (admissible: (lane: AdmissionKeys) => boolean, cap: number) => Promise<number> | number,
): Promise<TaskExplanation> {
  const base = { id: task.id, status: task.status, now };
  if (task.status !== TaskStatus.PENDING_SUBMIT) {
    return { ...base, verdict: 'not-pending', message: Messages.explainNotPending(task.id, task.status) };
  }
  if (task.runAt > now) {
    return { ...base, verdict: 'not-due', dueAt: task.runAt, message: Messages.explainNotDue(task.id, task.runAt, now) };
  }
  const refusedBy = laneRefusal(task, state, now);
  if (refusedBy !== null) {
    return { ...base, verdict: 'refused', refusedBy, message: Messages.explainRefused(task.id, refusedBy, now) };
  }
  const verdicts = new Map<string, boolean>();
  const admissible = (lane: AdmissionKeys): boolean => {
    const k = laneKey(lane);
    let ok = verdicts.get(k);
    if (ok === undefined) verdicts.set(k, (ok = laneRefusal(lane, state, now) === null));
    return ok;
  };
  const counted = await aheadOf(admissible, EXPLAIN_AHEAD_CAP + 1);
  const aheadCapped = counted > EXPLAIN_AHEAD_CAP;
  const ahead = Math.min(counted, EXPLAIN_AHEAD_CAP);
  if (ahead === 0) return { ...base, verdict: 'next', ahead: 0, aheadCapped: false, message: Messages.explainNext(task.id) };
  return { ...base, verdict: 'waiting', ahead, aheadCapped, message: Messages.explainWaiting(task.id, ahead, aheadCapped) };
}
