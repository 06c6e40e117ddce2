import { STATUS_COUNT } from './task-record';

const CHUNK_SHIFT = 12;
const CHUNK_SIZE = 1 << CHUNK_SHIFT; // seqs per chunk
const WORDS = CHUNK_SIZE >>> 5; // 32-bit words per status bitmap

interface Indexed {
  seq: number;
  /** Status code. */
  sc: number;
}

class Chunk<T> {
  readonly items: (T | undefined)[] = new Array(CHUNK_SIZE);
  live = 0;
  /** One bitmap of WORDS words per status: bit set = the task of that seq has that status. */
  readonly bits = new Uint32Array(STATUS_COUNT * WORDS);
  readonly counts = new Int32Array(STATUS_COUNT);
}

/**
 * Tasks by seq, with one bitmap per status: O(1) to add, move or remove a task, and list()
 * walks a status in seq order skipping chunks (4096 seqs) that hold none of it. Seqs are dense
 * (a store-wide counter), so a chunk array indexed by seq / 4096 is compact; chunks whose tasks
 * were all purged are dropped.
 */
export class StatusIndex<T extends Indexed> {
  private readonly chunks: (Chunk<T> | undefined)[] = [];

  add(item: T): void {
    const ci = Math.floor(item.seq / CHUNK_SIZE);
    let c = this.chunks[ci];
    if (c === undefined) {
      while (this.chunks.length < ci) this.chunks.push(undefined);
      c = this.chunks[ci] = new Chunk<T>();
    }
    const off = item.seq & (CHUNK_SIZE - 1);
    c.items[off] = item;
    c.live++;
    this.set(c, item.sc, off);
  }

  /** The item's status changes from code `from` to its current `sc`. */
  move(item: T, from: number): void {
    const c = this.chunks[Math.floor(item.seq / CHUNK_SIZE)]!;
    const off = item.seq & (CHUNK_SIZE - 1);
    this.clear(c, from, off);
    this.set(c, item.sc, off);
  }

  remove(item: T): void {
    const ci = Math.floor(item.seq / CHUNK_SIZE);
    const c = this.chunks[ci]!;
    const off = item.seq & (CHUNK_SIZE - 1);
    this.clear(c, item.sc, off);
    c.items[off] = undefined;
    if (--c.live === 0) this.chunks[ci] = undefined;
  }

  /** The first item (by seq) matching `pred`, any status; a full scan. */
  find(pred: (item: T) => boolean): T | undefined {
    for (const c of this.chunks) {
      if (c === undefined) continue;
      for (const item of c.items) if (item !== undefined && pred(item)) return item;
    }
    return undefined;
  }

  /** Up to `limit` items of status code `sc` with seq > afterSeq, by seq ascending. */
  list(sc: number, limit: number, afterSeq: number): T[] {
    const out: T[] = [];
    if (limit <= 0) return out;
    let seq = Math.max(0, Math.floor(afterSeq) + 1);
    const base = sc * WORDS;
    for (let ci = Math.floor(seq / CHUNK_SIZE); ci < this.chunks.length; ci++, seq = ci * CHUNK_SIZE) {
      const c = this.chunks[ci];
      if (c === undefined || c.counts[sc] === 0) continue;
      const off = seq & (CHUNK_SIZE - 1);
      for (let w = off >>> 5; w < WORDS; w++) {
        let word = c.bits[base + w];
        if (w === off >>> 5) word &= ~0 << (off & 31); // drop bits below the start
        while (word !== 0) {
          const low = word & -word;
          const bit = 31 - Math.clz32(low);
          out.push(c.items[(w << 5) + bit]!);
          if (out.length >= limit) return out;
          word ^= low;
        }
      }
    }
    return out;
  }

  private set(c: Chunk<T>, sc: number, off: number): void {
    c.bits[sc * WORDS + (off >>> 5)] |= 1 << (off & 31);
    c.counts[sc]++;
  }

  private clear(c: Chunk<T>, sc: number, off: number): void {
    c.bits[sc * WORDS + (off >>> 5)] &= ~(1 << (off & 31));
    c.counts[sc]--;
  }
}
