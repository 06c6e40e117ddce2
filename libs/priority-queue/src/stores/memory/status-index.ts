import { STATUS_COUNT } from './task-table';
import { objectArray } from './object-array';

const CHUNK_SHIFT = 12;
const CHUNK_SIZE = 1 << CHUNK_SHIFT; // seqs per chunk
const WORDS = CHUNK_SIZE >>> 5; // 32-bit words per status bitmap
/** Index of the first status count in Chunk.bits. */
const COUNTS = STATUS_COUNT * WORDS;

class Chunk {
  /** Slot of each seq of the chunk (-1 = none). */
  readonly slots = new Int32Array(CHUNK_SIZE).fill(-1);
  live = 0;
  /**
   * One bitmap of WORDS words per status (bit set = the task of that seq has that status), then
   * the count of each status: one array, so a status change reads one object and one block.
   */
  readonly bits = new Uint32Array(STATUS_COUNT * WORDS + STATUS_COUNT);
}

/**
 * Task slots by seq, with one bitmap per status: O(1) to add, move or remove a task, and list()
 * walks a status in seq order skipping chunks (4096 seqs) that hold none of it. Seqs are dense
 * (a store-wide counter), so a chunk array indexed by seq / 4096 is compact; chunks whose tasks
 * were all purged are dropped.
 */
export class StatusIndex {
  private readonly chunks = objectArray<Chunk | undefined>();

  add(slot: number, seq: number, sc: number): void {
    const ci = Math.floor(seq / CHUNK_SIZE);
    let c = this.chunks[ci];
    if (c === undefined) {
      while (this.chunks.length < ci) this.chunks.push(undefined);
      c = this.chunks[ci] = new Chunk();
    }
    const off = seq & (CHUNK_SIZE - 1);
    c.slots[off] = slot;
    c.live++;
    this.set(c, sc, off);
  }

  /** Reads the word of `seq` in the bitmap of status `sc` (prefetch: see TaskTable.prefetch); returns it. */
  peek(seq: number, sc: number): number {
    const c = this.chunks[Math.floor(seq / CHUNK_SIZE)];
    return c === undefined ? 0 : c.bits[sc * WORDS + ((seq & (CHUNK_SIZE - 1)) >>> 5)];
  }

  /** The status of the task of `seq` changes from code `from` to `to`. */
  move(seq: number, from: number, to: number): void {
    const c = this.chunks[Math.floor(seq / CHUNK_SIZE)]!;
    const off = seq & (CHUNK_SIZE - 1);
    this.clear(c, from, off);
    this.set(c, to, off);
  }

  remove(seq: number, sc: number): void {
    const ci = Math.floor(seq / CHUNK_SIZE);
    const c = this.chunks[ci]!;
    const off = seq & (CHUNK_SIZE - 1);
    this.clear(c, sc, off);
    c.slots[off] = -1;
    if (--c.live === 0) this.chunks[ci] = undefined;
  }

  /** The first slot (by seq) matching `pred`, any status; a full scan. -1 when none. */
  find(pred: (slot: number) => boolean): number {
    for (const c of this.chunks) {
      if (c === undefined) continue;
      for (const s of c.slots) if (s !== -1 && pred(s)) return s;
    }
    return -1;
  }

  /** Up to `limit` slots of status code `sc` with seq > afterSeq, by seq ascending. */
  list(sc: number, limit: number, afterSeq: number): number[] {
    const out: number[] = [];
    if (limit <= 0) return out;
    let seq = Math.max(0, Math.floor(afterSeq) + 1);
    const base = sc * WORDS;
    for (let ci = Math.floor(seq / CHUNK_SIZE); ci < this.chunks.length; ci++, seq = ci * CHUNK_SIZE) {
      const c = this.chunks[ci];
      if (c === undefined || c.bits[COUNTS + sc] === 0) continue;
      const off = seq & (CHUNK_SIZE - 1);
      for (let w = off >>> 5; w < WORDS; w++) {
        let word = c.bits[base + w];
        if (w === off >>> 5) word &= ~0 << (off & 31); // drop bits below the start
        while (word !== 0) {
          const low = word & -word;
          const bit = 31 - Math.clz32(low);
          out.push(c.slots[(w << 5) + bit]);
          if (out.length >= limit) return out;
          word ^= low;
        }
      }
    }
    return out;
  }

  /**
   * Calls `visit` with the slots of status code `sc`, by seq descending from below `beforeSeq`
   * (Infinity = the newest), skipping chunks without that status, until it returns false.
   */
  eachDesc(sc: number, beforeSeq: number, visit: (slot: number) => boolean): void {
    const base = sc * WORDS;
    let seq = Math.min(Math.ceil(beforeSeq) - 1, this.chunks.length * CHUNK_SIZE - 1);
    for (let ci = Math.floor(seq / CHUNK_SIZE); ci >= 0; ci--, seq = ci * CHUNK_SIZE + CHUNK_SIZE - 1) {
      const c = this.chunks[ci];
      if (c === undefined || c.bits[COUNTS + sc] === 0) continue;
      const off = seq & (CHUNK_SIZE - 1);
      for (let w = off >>> 5; w >= 0; w--) {
        let word = c.bits[base + w];
        if (w === off >>> 5 && (off & 31) !== 31) word &= (1 << ((off & 31) + 1)) - 1; // drop bits above the start
        while (word !== 0) {
          const bit = 31 - Math.clz32(word);
          if (!visit(c.slots[(w << 5) + bit])) return;
          word ^= 1 << bit;
        }
      }
    }
  }

  /** Calls `visit` with every slot of status code `sc` (seq order) until it returns false. */
  each(sc: number, visit: (slot: number) => boolean): void {
    const base = sc * WORDS;
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const c = this.chunks[ci];
      if (c === undefined || c.bits[COUNTS + sc] === 0) continue;
      for (let w = 0; w < WORDS; w++) {
        let word = c.bits[base + w];
        while (word !== 0) {
          const low = word & -word;
          if (!visit(c.slots[(w << 5) + 31 - Math.clz32(low)])) return;
          word ^= low;
        }
      }
    }
  }

  private set(c: Chunk, sc: number, off: number): void {
    c.bits[sc * WORDS + (off >>> 5)] |= 1 << (off & 31);
    c.bits[COUNTS + sc]++;
  }

  private clear(c: Chunk, sc: number, off: number): void {
    c.bits[sc * WORDS + (off >>> 5)] &= ~(1 << (off & 31));
    c.bits[COUNTS + sc]--;
  }
}
