/**
 * Calls made during one event-loop turn, sent to the store's server together (a worker's handlers
 * finishing together become one round trip instead of one each). Used by the Redis and the SQL
 * stores for complete(), and by PostgreSQL for single creates; the store says how a batch is
 * sent, this says when, and gives every call its own answer (a call refused by the server
 * rejects alone). With maxInFlight, calls made while that many batches are out wait and go
 * together when one is back (group commit).
 */
export interface TurnBatcherOptions<I, R> {
  /** Most items in one send; a turn with more sends several batches at once. */
  maxBatch: number;
  /**
   * Most batches out at once (default: no bound). Items added meanwhile wait, and go in the
   * batches sent as soon as one is back: a burst of calls then takes this many connections of a
   * pool, not one each, and grows batches instead.
   */
  maxInFlight?: number;
  /**
   * A call that finds nothing waiting and a free place goes at once, alone, instead of at the
   * turn's end: what comes while it is out gathers behind it (a lone awaited call pays no wait).
   */
  sendAtOnce?: boolean;
  /**
   * What an item writes (a task id): two items of one key never share a batch, the later one
   * goes in the next turn's (a batched write may not name one row twice).
   */
  keyOf(item: I): string;
  /**
   * Sends one batch; resolves with one answer per item, in the items' order: its result, or a
   * promise of it (a rejected one for an item the server refused). Rejects when the batch as a
   * whole failed (then no item has an answer yet).
   */
  send(items: readonly I[]): Promise<ReadonlyArray<R | PromiseLike<R>>>;
  /**
   * A batch that failed as a whole: `'alone'` sends each item of a batch of several again on its
   * own, so that an error reaches only the items it belongs to (a bad row, a deadlock); a
   * function gives each item its error at once (a lost connection: sending again would only
   * fail again). `{ aloneIf }`: alone when it says so, else every item gets the error as is (a
   * create may be sent again only when the server refused it, so that nothing was written).
   */
  onFailure: 'alone' | ((error: unknown, item: I) => unknown) | { aloneIf(error: unknown): boolean };
}

interface Waiting<I, R> {
  item: I;
  resolve(answer: R | PromiseLike<R>): void;
  reject(error: unknown): void;
}

export class TurnBatcher<I, R> {
  private pending: Array<Waiting<I, R>> = [];
  private turn: NodeJS.Immediate | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: TurnBatcherOptions<I, R>) {}

  /** Queues one item for this turn's batch; settles with its own answer. */
  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.options.sendAtOnce && this.pending.length === 0 && this.inFlight.size < this.maxInFlight) this.send([{ item, resolve, reject }]);
      else {
        this.pending.push({ item, resolve, reject });
        this.schedule();
      }
    });
  }

  /** Sends everything queued now, without waiting for the turn's end, and waits for every batch in flight. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.turn) {
        clearImmediate(this.turn);
        this.turn = null;
      }
      if (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) this.flush();
      else if (this.inFlight.size > 0) await Promise.race([...this.inFlight]);
      else return;
    }
  }

  private get maxInFlight(): number {
    return this.options.maxInFlight ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Batches of at most maxBatch distinct keys, while fewer than maxInFlight are out; an item whose
   * key is taken waits for the next turn, the items beyond the bound for a batch to come back.
   */
  private flush(): void {
    const all = this.pending;
    this.pending = [];
    const { maxBatch, keyOf } = this.options;
    const keys = new Set<string>();
    let batch: Array<Waiting<I, R>> = [];
    let i = 0;
    for (; i < all.length && this.inFlight.size < this.maxInFlight; i++) {
      const w = all[i];
      const key = keyOf(w.item);
      if (keys.has(key)) {
        this.pending.push(w);
        continue;
      }
      keys.add(key);
      batch.push(w);
      if (batch.length === maxBatch) {
        this.send(batch);
        batch = [];
        keys.clear();
      }
    }
    if (batch.length > 0) this.send(batch);
    // beyond the bound: kept in call order, sent when a batch is back (send's finally)
    if (i < all.length) this.pending.push(...all.slice(i));
    if (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) this.schedule();
  }

  private schedule(): void {
    this.turn ??= setImmediate(() => {
      this.turn = null;
      this.flush();
    });
  }

  private send(batch: Array<Waiting<I, R>>): void {
    const done = this.run(batch);
    this.inFlight.add(done);
    void done.finally(() => {
      this.inFlight.delete(done);
      // what waited for a free place goes now, with whatever this turn adds
      if (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) this.schedule();
    });
  }

  private async run(batch: Array<Waiting<I, R>>): Promise<void> {
    let answers: ReadonlyArray<R | PromiseLike<R>>;
    try {
      answers = await this.options.send(batch.map((w) => w.item));
    } catch (e) {
      const onFailure = this.options.onFailure;
      if (typeof onFailure === 'function') for (const w of batch) w.reject(onFailure(e, w.item));
      else if (batch.length === 1 || (onFailure !== 'alone' && !onFailure.aloneIf(e))) for (const w of batch) w.reject(e);
      else if (this.options.maxInFlight === undefined) await Promise.all(batch.map((w) => this.run([w])));
      else for (const w of batch) await this.run([w]); // one at a time, in the batch's place: the bound holds
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i].resolve(answers[i]);
  }
}
