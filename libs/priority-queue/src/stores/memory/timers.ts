import { SlotHeap } from './record-heaps';
import {
  D_TOK,
  DEADLINE,
  DEADLINE_AT,
  DEADLINE_DUE,
  DEADLINE_NONE,
  F_CANCEL_REQUESTED,
  F_EXPIRED_LEASE,
  L_TOK,
  LEASE,
  LEASE_NONE,
  LEASE_SUBMIT,
  LEASE_UNTIL,
  NEXT_POLL_AT,
  P_TOK,
  POLL,
  POLL_CANCEL,
  POLL_DUE,
  POLL_NONE,
  Q_TOK,
  QUEUE,
  QUEUE_DELAYED,
  RUN_AT,
  DEADLINE_OTHER,
  type TaskTable,
} from './task-table';

/**
 * Everything of the memory store that waits for a time: delayed tasks (runAt), deadlines, leases
 * and polls, each in a heap by time so that no operation scans the backlog. A task is in at most
 * one heap of each kind; the byte fields QUEUE, DEADLINE, LEASE and POLL of the task table say
 * which, and each entry carries a token (Q_TOK, D_TOK, L_TOK, P_TOK) so that a moved task's old
 * entry is recognised as dead (the heaps drop dead entries lazily, record-heaps.ts).
 */
export class Timers {
  /** PENDING_SUBMIT tasks whose runAt is still to come, by runAt. */
  readonly delayed: SlotHeap;
  /** Deadlines of due PENDING_SUBMIT tasks (a claim times them out before admission). */
  readonly dueDeadlines: SlotHeap;
  /** Deadlines of the other tasks without a live lease (delayed, SUBMITTED / RUNNING waiting for a poll). */
  readonly otherDeadlines: SlotHeap;
  readonly submitLeases: SlotHeap;
  readonly pollLeases: SlotHeap;
  /** SUBMITTED / RUNNING tasks by nextPollAt; those with a cancel requested apart (polled at once). */
  readonly pollsDue: SlotHeap;
  readonly pollsCanceled: SlotHeap;
  /** SUBMITTED / RUNNING tasks whose poll lease expired (seen by claimPolls) but is not cleared yet. */
  readonly expiredPollLeases = new Set<number>();
  private token = 0;

  constructor(private readonly t: TaskTable) {
    this.delayed = new SlotHeap(t, Q_TOK);
    this.dueDeadlines = new SlotHeap(t, D_TOK);
    this.otherDeadlines = new SlotHeap(t, D_TOK);
    this.submitLeases = new SlotHeap(t, L_TOK);
    this.pollLeases = new SlotHeap(t, L_TOK);
    this.pollsDue = new SlotHeap(t, P_TOK);
    this.pollsCanceled = new SlotHeap(t, P_TOK);
  }

  /** A fresh token for a heap entry. */
  nextToken(): number {
    return ++this.token;
  }

  /** A PENDING_SUBMIT task whose runAt is to come waits in the delayed heap. */
  delay(s: number): void {
    const t = this.t;
    t.setByte(s, QUEUE, QUEUE_DELAYED);
    const tok = this.nextToken();
    t.setNum(s, Q_TOK, tok);
    this.delayed.push(s, t.num(s, RUN_AT), t.seq(s), tok);
  }

  /** When the first delayed task is due, or null. */
  nextDelayedAt(): number | null {
    const d = this.delayed.top();
    return d === undefined ? null : this.t.num(d, RUN_AT);
  }

  /** Moves the task's deadline (if it has one) to the heap `where` (DEADLINE_DUE, DEADLINE_OTHER) or out (DEADLINE_NONE). */
  putDeadline(s: number, where: number): void {
    const t = this.t;
    const at = t.num(s, DEADLINE_AT);
    const cur = t.byte(s, DEADLINE);
    if (at !== at || cur === where) return; // no deadline (NaN), or already there
    if (cur !== DEADLINE_NONE) {
      t.setNum(s, D_TOK, 0);
      (cur === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).noteRemoved();
    }
    t.setByte(s, DEADLINE, where);
    if (where !== DEADLINE_NONE) {
      const tok = this.nextToken();
      t.setNum(s, D_TOK, tok);
      (where === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).push(s, at, t.seq(s), tok);
    }
  }

  /** Moves the task's poll to POLL_DUE, POLL_CANCEL or out (POLL_NONE). */
  putPoll(s: number, where: number): void {
    const t = this.t;
    const cur = t.byte(s, POLL);
    if (cur === where) return;
    if (cur !== POLL_NONE) {
      t.setNum(s, P_TOK, 0);
      (cur === POLL_DUE ? this.pollsDue : this.pollsCanceled).noteRemoved();
    }
    t.setByte(s, POLL, where);
    if (where !== POLL_NONE) {
      const tok = this.nextToken();
      t.setNum(s, P_TOK, tok);
      (where === POLL_DUE ? this.pollsDue : this.pollsCanceled).push(s, t.num(s, NEXT_POLL_AT), t.seq(s), tok);
    }
  }

  /** SUBMITTED / RUNNING without a live lease: waits for its poll (or its cancel) and its deadline. */
  placeInFlight(s: number): void {
    this.putPoll(s, this.t.flag(s, F_CANCEL_REQUESTED) ? POLL_CANCEL : POLL_DUE);
    this.putDeadline(s, DEADLINE_OTHER);
  }

  /** The poll to claim next at `now` (a due one or a canceled one, the earlier first), or undefined. */
  nextPoll(now: number): number | undefined {
    const t = this.t;
    let due = this.pollsDue.top();
    if (due !== undefined && t.num(due, NEXT_POLL_AT) > now) due = undefined;
    const canceled = this.pollsCanceled.top();
    if (due !== undefined && canceled !== undefined) {
      const a = t.num(due, NEXT_POLL_AT);
      const b = t.num(canceled, NEXT_POLL_AT);
      return a < b || (a === b && t.seq(due) < t.seq(canceled)) ? due : canceled;
    }
    return due ?? canceled;
  }

  /** Takes the task's lease out of its heap (and out of the expired poll leases). */
  dropLease(s: number): void {
    const t = this.t;
    const lease = t.byte(s, LEASE);
    if (lease !== LEASE_NONE) {
      t.setNum(s, L_TOK, 0);
      (lease === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).noteRemoved();
      t.setByte(s, LEASE, LEASE_NONE);
    }
    if (t.flag(s, F_EXPIRED_LEASE)) {
      t.setFlag(s, F_EXPIRED_LEASE, false);
      this.expiredPollLeases.delete(s);
    }
  }

  /** A live lease until `until` of kind LEASE_SUBMIT or LEASE_POLL; it takes the task out of the poll and deadline heaps. */
  pushLease(s: number, until: number, kind: number): void {
    const t = this.t;
    t.setNum(s, LEASE_UNTIL, until);
    t.setByte(s, LEASE, kind);
    const tok = this.nextToken();
    t.setNum(s, L_TOK, tok);
    (kind === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).push(s, until, t.seq(s), tok);
    this.putPoll(s, POLL_NONE);
    this.putDeadline(s, DEADLINE_NONE);
  }

  /**
   * claimPolls may take SUBMITTED / RUNNING tasks whose lease expired but was not cleared yet:
   * they move from the poll-lease heap to the poll heaps (lease fields untouched; the old holder
   * stays valid until someone else claims or recoverExpired clears it).
   */
  noticeExpiredPollLeases(now: number): void {
    const t = this.t;
    for (let s = this.pollLeases.top(); s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.pollLeases.top()) {
      this.pollLeases.pop();
      t.setNum(s, L_TOK, 0);
      t.setByte(s, LEASE, LEASE_NONE);
      t.setFlag(s, F_EXPIRED_LEASE, true);
      this.expiredPollLeases.add(s);
      this.placeInFlight(s);
    }
  }
}
