/**
 * Finished tasks kept under a removal count or age (core/removal.ts), per task type and side
 * (succeeded / not): insertion order is finish order, so the oldest come first. Only tasks that
 * finished under such a rule are here; a task deleted otherwise (purge, requeue) leaves it.
 */
export class KeptFinished {
  private readonly sets = new Map<string, Map<number, { slot: number; at: number }>>();

  static key(type: string, side: 'ok' | 'fail'): string {
    return side + '\u0000' + type;
  }

  add(key: string, seq: number, slot: number, at: number): void {
    let m = this.sets.get(key);
    if (m === undefined) this.sets.set(key, (m = new Map()));
    m.set(seq, { slot, at });
  }

  remove(key: string, seq: number): void {
    const m = this.sets.get(key);
    if (m === undefined || !m.delete(seq)) return;
    if (m.size === 0) this.sets.delete(key);
  }

  /** Slots beyond the newest `count` or finished at or before `cutoff` (null = no such bound), oldest first, at most `max`. */
  beyond(key: string, count: number | null, cutoff: number | null, max: number): number[] {
    const m = this.sets.get(key);
    const out: number[] = [];
    if (m === undefined) return out;
    let left = m.size;
    for (const e of m.values()) {
      if (out.length >= max) break;
      if ((count !== null && left > count) || (cutoff !== null && e.at <= cutoff)) {
        out.push(e.slot);
        left--;
      } else break;
    }
    return out;
  }
}
