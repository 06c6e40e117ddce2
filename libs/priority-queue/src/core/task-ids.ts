import { randomUUID } from 'node:crypto';

const ID_LENGTH = 36;
const PREFIX_LENGTH = 24;
const COUNTER_LIMIT = 2 ** 48;

/**
 * Task ids: UUID-shaped (8-4-4-4-12 hex, version 4 and variant bits of a random UUID), made of a
 * random prefix (the first 24 characters of one randomUUID: 70 random bits) and a 48-bit counter
 * in the last 12 digits, so ids stay unique across processes. About 5x cheaper than randomUUID()
 * per task, and a flat string (randomUUID returns a rope that every hash table must flatten
 * first). `numberOf` gives back the number of an id this sequence made, so that a store that
 * makes its ids here can index them by number instead of by string.
 */
export class TaskIdSequence {
  private readonly codes: number[];
  /**
   * Prefixes used so far, the current one last: a new one every 2^48 ids. numberOf stays exact
   * for 32 of them (2^53 / 2^48): 9e15 ids, centuries at a million ids a second.
   */
  private readonly prefixes: string[] = [];
  private counter = 0;

  constructor() {
    this.codes = new Array<number>(ID_LENGTH).fill(48);
    this.newPrefix();
  }

  next(): string {
    if (++this.counter >= COUNTER_LIMIT) {
      this.newPrefix();
      this.counter = 1;
    }
    const codes = this.codes;
    let n = this.counter;
    for (let i = ID_LENGTH - 1; i >= PREFIX_LENGTH; i--) {
      const d = n % 16;
      codes[i] = d < 10 ? 48 + d : 87 + d; // 0-9, a-f
      n = Math.floor(n / 16);
    }
    return String.fromCharCode.apply(null, codes);
  }

  /** A number unique to each id this sequence made (a safe integer >= 1), or -1 for any other string. */
  numberOf(id: string): number {
    if (id.length !== ID_LENGTH) return -1;
    const prefixes = this.prefixes;
    let g = prefixes.length - 1;
    while (g >= 0 && !id.startsWith(prefixes[g])) g--;
    if (g < 0) return -1;
    let n = 0;
    for (let i = PREFIX_LENGTH; i < ID_LENGTH; i++) {
      const c = id.charCodeAt(i);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return -1;
      n = n * 16 + d;
    }
    return n === 0 ? -1 : g * COUNTER_LIMIT + n;
  }

  private newPrefix(): void {
    const prefix = randomUUID().slice(0, PREFIX_LENGTH);
    this.prefixes.push(prefix);
    for (let i = 0; i < PREFIX_LENGTH; i++) this.codes[i] = prefix.charCodeAt(i);
  }
}
