import type { Lane } from './lanes';
import type { LaneScheduler } from './lane-scheduler';
import type { OrderMode } from './order-mode';
import type { Bucket, PendingStats } from './pending-stats';
import type { PolicyState } from './policy-state';
import type { Timers } from './timers';
import { DEADLINE_DUE, DEADLINE_NONE, DEADLINE_OTHER, F_RANKED, LANE, PRIORITY, Q_TOK, QUEUE, QUEUE_DELAYED, QUEUE_DUE, QUEUE_NONE, RUN_AT, type TaskTable } from './task-table';

/**
 * The PENDING_SUBMIT tasks of the memory store: a due task is in its lane's queue (by order key,
 * order-mode.ts) and in its priority's bucket (stats, query, explain); a task whose runAt is to
 * come waits in the timers' delayed heap until promote() moves it into its lane.
 */
export class PendingTasks {
  constructor(
    private readonly t: TaskTable,
    private readonly order: OrderMode,
    private readonly scheduler: LaneScheduler,
    private readonly timers: Timers,
    private readonly stats: PendingStats,
    private readonly policy: PolicyState,
  ) {}

  enter(s: number, now: number): void {
    const t = this.t;
    const b = this.stats.bucketOf(t.int(s, PRIORITY));
    b.count++;
    if (t.num(s, RUN_AT) <= now) this.enterDue(s, b);
    else {
      this.timers.delay(s);
      this.timers.putDeadline(s, DEADLINE_OTHER);
    }
  }

  private enterDue(s: number, b: Bucket): void {
    const t = this.t;
    const lane = t.ref<Lane>(s, LANE);
    t.setByte(s, QUEUE, QUEUE_DUE);
    const tok = this.timers.nextToken();
    t.setNum(s, Q_TOK, tok);
    const o = this.order;
    const p = t.int(s, PRIORITY);
    const runAt = t.num(s, RUN_AT);
    const seq = t.seq(s);
    const tag = this.policy.tagNumber(s);
    lane.tasks.push(s, o.k1(p, runAt, tag), o.k2(p, runAt, tag), tok, o.k3(p, runAt, tag), o.usesRank && t.flag(s, F_RANKED) ? seq : 0);
    lane.live++;
    b.queue.push(s, runAt, seq, tok);
    b.due++;
    this.timers.putDeadline(s, DEADLINE_DUE);
    this.scheduler.refresh(lane);
  }

  /** The task stops being PENDING_SUBMIT (claimed, canceled, timed out) or is re-keyed. */
  leave(s: number): void {
    const t = this.t;
    const priority = t.int(s, PRIORITY);
    const b = this.stats.buckets.get(priority)!;
    const q = t.byte(s, QUEUE);
    if (q === QUEUE_DUE) {
      const lane = t.ref<Lane>(s, LANE);
      const tok = t.num(s, Q_TOK);
      t.setNum(s, Q_TOK, 0);
      // a claimed task is its lane's head and usually its bucket's oldest: both drop it at once
      lane.tasks.removeLive(s, tok);
      lane.live--;
      b.queue.removeLive(s, tok);
      b.due--;
      this.scheduler.refresh(lane);
    } else if (q === QUEUE_DELAYED) {
      t.setNum(s, Q_TOK, 0);
      this.timers.delayed.noteRemoved();
    }
    t.setByte(s, QUEUE, QUEUE_NONE);
    this.stats.leave(priority, b);
    this.timers.putDeadline(s, DEADLINE_NONE);
  }

  /** leave() of a claimed head once it left its lane (claimSubmissions): bucket, token, deadline. */
  leaveClaimed(s: number, tok: number): void {
    const t = this.t;
    const priority = t.int(s, PRIORITY);
    const b = this.stats.buckets.get(priority)!;
    t.setNum(s, Q_TOK, 0);
    b.queue.removeLive(s, tok);
    b.due--;
    t.setByte(s, QUEUE, QUEUE_NONE);
    this.stats.leave(priority, b);
    this.timers.putDeadline(s, DEADLINE_NONE);
  }

  /** Moves due delayed tasks into their lanes and re-readies rate-parked lanes whose token is due. */
  promote(now: number): void {
    const t = this.t;
    const delayed = this.timers.delayed;
    for (let s = delayed.top(); s !== undefined && t.num(s, RUN_AT) <= now; s = delayed.top()) {
      delayed.pop();
      t.setNum(s, Q_TOK, 0);
      this.enterDue(s, this.stats.buckets.get(t.int(s, PRIORITY))!);
    }
    this.scheduler.wakeRateParked(now);
  }

  /** When a claim may find work that is not due yet: the first delayed task or rate wake-up. */
  nextWakeAt(): number | null {
    const d = this.timers.nextDelayedAt();
    const r = this.scheduler.nextRateWakeAt();
    return d === null ? r : r === null ? d : Math.min(d, r);
  }
}
