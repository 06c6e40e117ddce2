import { SlotHeap } from './record-heaps';
import { F_BUCKET_LATE, Q_TOK, RUN_AT, type TaskTable } from './task-table';

/** Numbers per ring entry: runAt, seq, token, slot. */
const E = 4;

/**
 * The due tasks of one priority by (runAt, seq), for stats (oldest wait per priority). Tasks come
 * in that order almost always (runAt = now of a clock that does not go back, seq increasing), and
 * a claim takes the oldest (the global order is priority, runAt, seq). So the bucket is a FIFO
 * ring: an append and a removal at the front touch the ends of one array, in cache, instead of a
 * sift through a heap of thousands of entries (a cache miss per level) on every claim. The rare
 * task that comes out of order (a delayed task promoted late, a clock step back) goes to a small
 * heap beside the ring (flag F_BUCKET_LATE on its slot). Removals from the middle are lazy, as in
 * lazy-heap.ts: an entry is live while the slot's Q_TOK holds the entry's token.
 */
export class BucketQueue {
  private readonly ring: number[] = [];
  /** Index (in numbers) of the front entry. */
  private head = 0;
  /** Dead entries in the ring. */
  private stale = 0;
  private readonly late: SlotHeap;

  constructor(private readonly table: TaskTable) {
    this.late = new SlotHeap(table, Q_TOK);
  }

  push(s: number, runAt: number, seq: number, token: number): void {
    const r = this.ring;
    const n = r.length;
    if (n === this.head || runAt > r[n - E] || (runAt === r[n - E] && seq > r[n - E + 1])) {
      r.push(runAt, seq, token, s);
    } else {
      this.table.setFlag(s, F_BUCKET_LATE, true);
      this.late.push(s, runAt, seq, token);
    }
  }

  /** The owner changed the slot's Q_TOK from `token` (the entry is dead now). */
  removeLive(s: number, token: number): void {
    const t = this.table;
    if (t.flag(s, F_BUCKET_LATE)) {
      t.setFlag(s, F_BUCKET_LATE, false);
      this.late.removeLive(s, token);
      return;
    }
    const r = this.ring;
    if (this.head < r.length && r[this.head + 3] === s && r[this.head + 2] === token) this.shift();
    else if (++this.stale > 32 && this.stale * 2 * E > r.length - this.head) this.compact();
  }

  /** Slot of the oldest live entry (by runAt, then seq), or undefined. */
  top(): number | undefined {
    this.dropDeadFront();
    const r = this.ring;
    const late = this.late.top();
    if (this.head === r.length) return late;
    const h = this.head;
    if (late === undefined) return r[h + 3];
    const k1 = this.late.topK1();
    return r[h] < k1 || (r[h] === k1 && r[h + 1] < this.late.topK2()) ? r[h + 3] : late;
  }

  /** Live slots in no particular order (tests). */
  liveItems(): number[] {
    const out = this.late.liveItems();
    const r = this.ring;
    for (let i = this.head; i < r.length; i += E) if (this.isLive(i)) out.push(r[i + 3]);
    return out;
  }

  /**
   * Calls `visit` with the live entries whose (runAt, seq) comes after (afterRunAt, afterSeq), in
   * (runAt, seq) order, until it returns false (TaskStore.query pages): a binary search into the
   * ring, merged with the late entries (few; sorted here).
   */
  eachAfter(afterRunAt: number, afterSeq: number, visit: (slot: number, runAt: number) => boolean): void {
    const t = this.table;
    const after = (runAt: number, seq: number) => runAt > afterRunAt || (runAt === afterRunAt && seq > afterSeq);
    const late = this.late
      .liveItems()
      .map((s) => ({ s, runAt: t.num(s, RUN_AT), seq: t.seq(s) }))
      .filter((x) => after(x.runAt, x.seq))
      .sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
    const r = this.ring;
    let lo = this.head / E;
    let hi = r.length / E;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after(r[mid * E], r[mid * E + 1])) hi = mid;
      else lo = mid + 1;
    }
    let j = 0;
    for (let i = lo * E; i < r.length || j < late.length; ) {
      const ringFirst = i < r.length && (j >= late.length || r[i] < late[j].runAt || (r[i] === late[j].runAt && r[i + 1] < late[j].seq));
      if (ringFirst) {
        const live = this.isLive(i);
        const s = r[i + 3];
        const runAt = r[i];
        i += E;
        if (live && !visit(s, runAt)) return;
      } else {
        const x = late[j++];
        if (!visit(x.s, x.runAt)) return;
      }
    }
  }

  private isLive(i: number): boolean {
    return this.table.num(this.ring[i + 3], Q_TOK) === this.ring[i + 2];
  }

  private dropDeadFront(): void {
    while (this.stale > 0 && this.head < this.ring.length && !this.isLive(this.head)) {
      this.stale--;
      this.shift();
    }
  }

  private shift(): void {
    const r = this.ring;
    this.head += E;
    if (this.head === r.length) {
      r.length = 0;
      this.head = 0;
    } else if (this.head >= 4096 && this.head * 2 >= r.length) {
      r.copyWithin(0, this.head);
      r.length -= this.head;
      this.head = 0;
    }
  }

  /** Drops every dead entry of the ring (order kept). */
  private compact(): void {
    const r = this.ring;
    let w = 0;
    for (let i = this.head; i < r.length; i += E) {
      if (!this.isLive(i)) continue;
      for (let k = 0; k < E; k++) r[w + k] = r[i + k];
      w += E;
    }
    r.length = w;
    this.head = 0;
    this.stale = 0;
  }
}
