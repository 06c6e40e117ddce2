import type { RefusalReason } from '../../core/admission';
import { claimFromLanes, LOAD, RETRY, type ReadyLaneSource } from '../../core/claim-loop';
import { laneRefusalReason, nextTokenAt, type LaneRoom } from '../../core/lane-admission';
import { compareOrder } from '../../core/order-key';
import type { Row } from './db';
import { laneRoom } from './lane-admission';
import { orderOfRow } from './order-columns';
import { rk } from './rows';
import { isReady, laneFromRow, type LaneState } from './sql/lanes';
import type { Resource } from './sql/resources';

/** How the selection loop reads the database. */
export interface ClaimReads {
  /**
   * The best `size` ready lanes (after writing the dirty lanes of `write`, so the page reflects
   * this claim's changes) and the resources their admission reads and those of `unwritten`
   * (changed lanes not written yet), loaded into `resources`.
   */
  page(size: number, write: Iterable<LaneState>, resources: Map<string, Resource>, unwritten: readonly LaneState[]): Promise<Row[]>;
  /**
   * The best `n` merged tasks of each lane, locked, best first (see sql/lanes.ts laneTasks);
   * one round trip for all of them where the store has round trips.
   */
  laneTasks(wants: ReadonlyArray<{ laneKey: string; n: number }>): Promise<Row[][]>;
  /** How many lanes one laneTasks call may read: 1 = no read ahead (SQLite: no round trips). */
  readonly readAhead: number;
}

/**
 * Step 5 of the claim (see claim-submissions.ts): core's claim loop (core/claim-loop.ts) over
 * pages of ready lanes read from the lanes table. Returns the claimed rows in claim order;
 * `lanes` holds every lane changed, `resources` every counter changed.
 */
export async function selectClaims(
  reads: ClaimReads,
  limit: number,
  now: number,
  order: { aging: number; fair: boolean },
  lanes: Map<string, LaneState>,
  resources: Map<string, Resource>,
): Promise<Row[]> {
  const src = new PagedLanes(reads, limit, now, order.aging, order.fair, lanes, resources);
  const claimed: Row[] = [];
  while (!claimFromLanes(src, limit, now, claimed)) await src.load(limit - claimed.length);
  return claimed;
}

/** Tasks read per lane read ahead (claim-loop's readAhead): a lane that gives more is read again. */
const READ_AHEAD_TASKS = 4;

/** Largest page of ready lanes one read asks for (the rows and the resources they read). */
const MAX_PAGE = 1024;

/**
 * The ready lanes of the lanes table, a page at a time, as core's claim loop reads them.
 * Admission is per lane, so a lane is checked (and parked) on its stored head without reading
 * its tasks; its tasks are read only when it may really give the next claim. The stored head is
 * a lower bound (a cancel, a priority change or a timeout removes a task without touching the
 * lane): a lane whose real head differs is re-keyed and looked at again (RETRY).
 *
 * The loop ends only when it has `limit` tasks or no ready lane is left (DESIGN §3: no
 * head-of-line blocking, whatever the number of refused lanes ahead). A page that is used up
 * (every lane parked or emptied) while more ready lanes may follow is followed by the next one:
 * the parked lanes are written first, so the next read starts past them. The page size
 * doubles (up to MAX_PAGE) while pages come back used up, so a long run of refused lanes costs
 * few round trips.
 *
 * The lanes changed before the first page (the merge of due staged tasks, sql/merge-staged.ts)
 * are not written before it: the page is read as stored, each of its lanes replaced by this
 * claim's state of it, and the changed ready lanes it does not show that come before its last
 * stored head (or all of them, when the page is not full) are added to it. Every lane is then
 * written once, at the end of the claim (one round trip less per claim that merged).
 *
 * A lane's tasks are read when it may give the next claim; with `readAhead` > 1 the same read
 * also takes the tasks of the next lanes of the page that have room now (a few each), since
 * under tight limits most lanes give one or two tasks each: fewer round trips per claim. A
 * lane read ahead but then parked or not reached only kept its rows locked until the commit.
 */
class PagedLanes implements ReadyLaneSource<LaneState, Row> {
  /** The page's lanes still ready, best head first. */
  private cands: LaneState[] = [];
  /** Head of the page's last lane when the page was full: lanes past it may be beaten by unread ones. */
  private boundary: LaneState['head'] = null;
  /** No page read yet, or the last one was used up while full: more ready lanes may follow. */
  private more = true;
  private pageSize: number;
  private pages = 0;
  /** A lane whose tasks `take` asked for. */
  private unread: LaneState | null = null;
  /**
   * Seqs of the tasks this claim took, per lane: they stay PENDING_SUBMIT until the claim
   * writes them, so a lane read again (its earlier read used up) gets them again and drops them.
   */
  private readonly taken = new Map<LaneState, Set<string>>();
  private readonly cmp = (a: LaneState, b: LaneState) => compareOrder(a.head!, b.head!, this.aging);

  constructor(
    private readonly reads: ClaimReads,
    limit: number,
    private readonly now: number,
    private readonly aging: number,
    /** The queue has fairness: heads carry their fair tags (order-columns.ts). */
    private readonly fair: boolean,
    private readonly lanes: Map<string, LaneState>,
    private readonly resources: Map<string, Resource>,
  ) {
    this.pageSize = Math.max(32, limit * 2);
  }

  first(): LaneState | null | typeof LOAD {
    const l = this.cands[0];
    if (l === undefined) return this.more ? LOAD : null;
    // past the boundary, a lane not on this page may come first: read the next page
    if (this.boundary !== null && compareOrder(l.head!, this.boundary, this.aging) > 0) return LOAD;
    return l;
  }

  room(lane: LaneState): LaneRoom {
    return (lane.room ??= laneRoom(lane.keys, this.resources));
  }

  park(l: LaneState, reason: RefusalReason, now: number): void {
    // every task of a lane has the same admission keys: park the lane, whatever its head
    const k = l.keys;
    if (reason === 'rate') l.parkedUntil = Math.max(now + 1, Math.ceil(nextTokenAt(this.room(l).provider, now)));
    else if (reason === 'paused') l.parkedOn = rk.provider(k.provider_key);
    else if (reason === 'account') l.parkedOn = rk.account(k.provider_key, k.account_id!);
    else if (reason === 'tenant') l.parkedOn = rk.tenant(k.tenant_id!);
    else l.parkedOn = rk.concurrencyKey(k.concurrency_key!);
    l.dirty = true;
    this.cands.shift();
  }

  take(l: LaneState): Row | typeof RETRY | typeof LOAD {
    if (!l.tasks) {
      this.unread = l;
      return LOAD;
    }
    if (l.tasks.length === 0) {
      // every merged task of the lane left (claimed, canceled, re-prioritised, timed out)
      l.head = null;
      l.dirty = true;
      this.cands.shift();
      return RETRY;
    }
    const actual = orderOfRow(l.tasks[0], this.fair);
    if (compareOrder(actual, l.head!, this.aging) !== 0) {
      l.head = actual; // the stored head was a lower bound: re-key and look again
      l.dirty = true;
      this.reinsert();
      return RETRY;
    }
    const row = l.tasks.shift()!;
    let taken = this.taken.get(l);
    if (!taken) this.taken.set(l, (taken = new Set()));
    taken.add(String(row.seq));
    l.dirty = true;
    if (l.tasks.length > 0) {
      l.head = orderOfRow(l.tasks[0], this.fair);
      this.reinsert();
    } else if (l.complete) {
      l.head = null;
      this.cands.shift();
    } else {
      l.tasks = undefined; // read more next time; the claimed key stays a lower bound
      this.reinsert();
    }
    return row;
  }

  /** Reads what first() or take() asked for; `wanted` = tasks still to claim. */
  async load(wanted: number): Promise<void> {
    const l = this.unread;
    if (l !== null) {
      this.unread = null;
      const batch = [{ lane: l, n: wanted + 1 }];
      for (const o of this.cands) {
        if (batch.length >= this.reads.readAhead) break;
        if (o === l || o.tasks !== undefined) continue;
        if (this.boundary !== null && compareOrder(o.head!, this.boundary, this.aging) > 0) break;
        if (laneRefusalReason(this.room(o), this.now) === null) batch.push({ lane: o, n: Math.min(wanted + 1, READ_AHEAD_TASKS) });
      }
      const skip = batch.map((b) => this.taken.get(b.lane));
      const got = await this.reads.laneTasks(batch.map((b, i) => ({ laneKey: b.lane.laneKey, n: b.n + (skip[i]?.size ?? 0) })));
      batch.forEach((b, i) => {
        const seen = skip[i];
        b.lane.tasks = seen ? got[i].filter((r) => !seen.has(String(r.seq))) : got[i];
        b.lane.complete = got[i].length < b.n + (seen?.size ?? 0);
      });
      return;
    }
    const first = this.pages++ === 0;
    if (!first) this.pageSize = Math.min(MAX_PAGE, this.pageSize * 2);
    const unwritten = first ? [...this.lanes.values()].filter((l) => l.dirty && isReady(l)) : [];
    const page = await this.reads.page(this.pageSize, first ? [] : this.lanes.values(), this.resources, unwritten);
    const full = page.length === this.pageSize;
    this.cands = page.map((r) => {
      const key = String(r.lane_key);
      let lane = this.lanes.get(key);
      if (!lane) this.lanes.set(key, (lane = laneFromRow(r, this.fair)));
      return lane;
    });
    // the page's order is that of the stored heads: its last stored head bounds what it showed
    this.boundary = full ? laneFromRow(page[page.length - 1], this.fair).head : null;
    const shown = new Set(this.cands);
    for (const l of unwritten) {
      if (!shown.has(l) && (this.boundary === null || compareOrder(l.head!, this.boundary, this.aging) <= 0)) this.cands.push(l);
    }
    if (unwritten.length > 0) this.cands = this.cands.filter(isReady);
    this.more = full;
    this.cands.sort(this.cmp);
  }

  /** Moves cands[0] (whose key grew) to its place; the rest is sorted. */
  private reinsert(): void {
    const cands = this.cands;
    const l = cands.shift()!;
    let lo = 0;
    let hi = cands.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cmp(cands[mid], l) <= 0) lo = mid + 1;
      else hi = mid;
    }
    cands.splice(lo, 0, l);
  }
}
