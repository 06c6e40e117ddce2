import { effectiveTenantWeight, type LimitsSnapshot } from '../../core/admission';
import { boostAtOf, boostedPriority, type BoostOptions } from '../../core/boost';
import { FairTagOverflowError } from '../../core/errors';
import { FairTags, nextFinishTag } from '../../core/fairness';
import { LazyHeap } from './lazy-heap';
import { MAX_MEMORY_FAIR_TAG } from './order-mode';
import { KEYS, POLICY, PRIORITY, type LaneKeys, type TaskPolicy, type TaskTable } from './task-table';

/** Unfired deadline boosts by (boostAt, seq); an entry is live while its task's TaskPolicy holds its token. */
class BoostHeap extends LazyHeap<number> {
  constructor(private readonly table: TaskTable) {
    super();
  }

  protected isLive(s: number, token: number): boolean {
    const p = this.table.ref<TaskPolicy | null>(s, POLICY);
    return p !== null && p.boostTok === token;
  }
}

/**
 * The DESIGN §7 state of the memory store: the fair tags (core/fairness.ts FairTags: V per level,
 * F per tenant and level) and the unfired deadline boosts (core/boost.ts). Every method runs
 * inside one store operation (create, claim, changePriority), so the state changes atomically
 * with it. Tasks keep their tag and boost in their TaskPolicy (task-table.ts POLICY).
 */
export class PolicyState {
  private readonly tags: FairTags | null;
  private readonly boosts: BoostHeap;
  private token = 0;
  /** While a create batch runs: each finish tag it moved and its value before (rollbackBatch). */
  private journal: Array<[string | null, number, bigint]> | null = null;

  constructor(
    private readonly t: TaskTable,
    fair: boolean,
  ) {
    this.tags = fair ? new FairTags() : null;
    this.boosts = new BoostHeap(t);
  }

  get fair(): boolean {
    return this.tags !== null;
  }

  /**
   * The TaskPolicy of a task being created in slot `s` (null when it needs none): tagged at its
   * level with its tenant's weight now, its boost (core/boost.ts boostAtOf) queued.
   */
  forNew(s: number, seq: number, tenantId: string | null, priority: number, deadlineAt: number | null, boost: BoostOptions | null | undefined, limits: LimitsSnapshot): TaskPolicy | null {
    const withBoost = boost != null && deadlineAt !== null;
    if (this.tags === null && !withBoost) return null;
    const p: TaskPolicy = { tag: null, boostAt: null, boostPriority: null, boostTok: 0 };
    if (this.tags !== null) p.tag = this.tag(tenantId, priority, limits);
    if (withBoost) {
      p.boostAt = boostAtOf(deadlineAt, boost.beforeDeadlineMs);
      p.boostPriority = boost.priority;
      p.boostTok = ++this.token;
      this.boosts.push(s, p.boostAt, seq, p.boostTok);
    }
    return p;
  }

  /** A create batch starts: the finish tags it moves are journaled until endBatch. */
  beginBatch(): void {
    if (this.tags !== null) this.journal = [];
  }

  endBatch(): void {
    this.journal = null;
  }

  /** The batch failed (all or none): its finish tags go back to their values before it. */
  rollbackBatch(): void {
    const j = this.journal;
    if (j === null) return;
    for (let i = j.length - 1; i >= 0; i--) this.tags!.setFinishTag(j[i][0], j[i][1], j[i][2]);
    this.journal = [];
  }

  /** The task in slot `s` moved to `priority` (a priority change or a boost): re-tagged there. */
  retag(s: number, priority: number, limits: LimitsSnapshot): void {
    const p = this.t.ref<TaskPolicy | null>(s, POLICY);
    if (this.tags === null || p === null) return;
    p.tag = this.tag(this.t.ref<LaneKeys>(s, KEYS).tenantId, priority, limits);
  }

  /** The task in slot `s` was claimed: V of its level advances to its tag. */
  claimed(s: number): void {
    if (this.tags === null) return;
    const p = this.t.ref<TaskPolicy>(s, POLICY);
    this.tags.claimed(this.t.ref<LaneKeys>(s, KEYS).tenantId, this.t.int(s, PRIORITY), p.tag!);
  }

  /** The fair tag of slot `s` as an exact number for the order keys (0 without fairness). */
  tagNumber(s: number): number {
    if (this.tags === null) return 0;
    return Number(this.t.ref<TaskPolicy>(s, POLICY).tag);
  }

  /**
   * Fires every unfired boost with boostAt <= now, in (boostAt, seq) order; calls `raise` for each
   * task it moves up (still PENDING_SUBMIT, below its boost priority), in that order (so the
   * re-tags follow it). A boost fires once, whatever it finds.
   */
  fireDue(now: number, raise: (s: number, priority: number) => void): void {
    const h = this.boosts;
    for (let s = h.top(); s !== undefined && h.topK1() <= now; s = h.top()) {
      h.pop();
      const p = this.t.ref<TaskPolicy>(s, POLICY);
      p.boostTok = 0;
      const to = boostedPriority({ status: this.t.status(s), priority: this.t.int(s, PRIORITY), boostPriority: p.boostPriority });
      if (to !== null) raise(s, to);
    }
  }

  /** A priority change at `now`: a due boost of the task that has not fired fires unused (core/boost.ts). */
  fireUnused(s: number, now: number): void {
    const p = this.t.ref<TaskPolicy | null>(s, POLICY);
    if (p === null || p.boostTok === 0 || p.boostAt! > now) return;
    p.boostTok = 0;
    this.boosts.noteRemoved();
  }

  /** Slot `s` is about to be released (purge): its boost entry, if any, is dead. */
  drop(s: number): void {
    const p = this.t.ref<TaskPolicy | null>(s, POLICY);
    if (p === null || p.boostTok === 0) return;
    p.boostTok = 0;
    this.boosts.noteRemoved();
  }

  private tag(tenantId: string | null, priority: number, limits: LimitsSnapshot): bigint {
    const tags = this.tags!;
    const w = effectiveTenantWeight(limits, tenantId);
    const before = tags.finishTag(tenantId, priority);
    if (nextFinishTag(before, tags.virtualTime(priority), w) > MAX_MEMORY_FAIR_TAG) throw new FairTagOverflowError();
    this.journal?.push([tenantId, priority, before]);
    return tags.tag(tenantId, priority, w);
  }
}
