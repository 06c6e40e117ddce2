import fc from 'fast-check';
import { TurnBatcher, type TurnBatcherOptions } from '../../libs/priority-queue/src/stores/shared/turn-batcher';

interface Item {
  key: string;
  n: number;
  /** The server refuses this item alone. */
  refused?: boolean;
  /** A batch holding this item fails as a whole. */
  poison?: boolean;
}

/** A fake server: records every batch, answers each item with its n * 10 (a value of its own). */
function server(options: Partial<TurnBatcherOptions<Item, number>> = {}) {
  const sent: Item[][] = [];
  const batcher = new TurnBatcher<Item, number>({
    maxBatch: 500,
    keyOf: (i) => i.key,
    send: async (items) => {
      sent.push([...items]);
      await new Promise((r) => setImmediate(r));
      if (items.some((i) => i.poison)) throw new Error(`batch of ${items.length} failed`);
      return items.map((i) => (i.refused ? Promise.reject(new Error(`refused ${i.n}`)) : i.n * 10));
    },
    onFailure: 'alone',
    ...options,
  });
  return { sent, batcher };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('TurnBatcher (shared by the Redis and SQL completes)', () => {
  it('sends the calls of one event-loop turn together and gives each call its own answer', async () => {
    const { sent, batcher } = server();
    const answers = await Promise.all([1, 2, 3].map((n) => batcher.add({ key: `t${n}`, n })));
    expect(answers).toEqual([10, 20, 30]);
    expect(sent.map((b) => b.map((i) => i.n))).toEqual([[1, 2, 3]]);
  });

  it('calls of different turns go in different batches', async () => {
    const { sent, batcher } = server();
    const a = batcher.add({ key: 'a', n: 1 });
    await turn();
    const b = batcher.add({ key: 'b', n: 2 });
    expect(await Promise.all([a, b])).toEqual([10, 20]);
    expect(sent.map((x) => x.map((i) => i.n))).toEqual([[1], [2]]);
  });

  it('an item the server refuses rejects alone', async () => {
    const { batcher } = server();
    const out = await Promise.allSettled([batcher.add({ key: 'a', n: 1 }), batcher.add({ key: 'b', n: 2, refused: true }), batcher.add({ key: 'c', n: 3 })]);
    expect(out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([10, 'refused 2', 30]);
  });

  it("a batch that fails as a whole is sent again item by item ('alone'): the error reaches only its item", async () => {
    const { sent, batcher } = server();
    const out = await Promise.allSettled([1, 2, 3, 4].map((n) => batcher.add({ key: `t${n}`, n, poison: n === 3 })));
    expect(out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([10, 20, 'batch of 1 failed', 40]);
    expect(sent.map((b) => b.length)).toEqual([4, 1, 1, 1, 1]);
  });

  it('with an onFailure function, every item of a failed batch gets its own error at once', async () => {
    const { sent, batcher } = server({ onFailure: (e, item) => new Error(`${(e as Error).message} (item ${item.n})`) });
    const out = await Promise.allSettled([1, 2].map((n) => batcher.add({ key: `t${n}`, n, poison: n === 2 })));
    expect(out.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.value))).toEqual(['batch of 2 failed (item 1)', 'batch of 2 failed (item 2)']);
    expect(sent).toHaveLength(1);
  });

  it('drain() sends what is queued without waiting for the turn and waits for every batch in flight', async () => {
    const { sent, batcher } = server();
    let settled = 0;
    for (let n = 0; n < 1200; n++) void batcher.add({ key: `t${n % 700}`, n }).then(() => settled++);
    await batcher.drain();
    expect(settled).toBe(1200);
    expect(sent.reduce((s, b) => s + b.length, 0)).toBe(1200);
    await batcher.drain(); // nothing left: returns at once
  });

  it('maxInFlight: calls made while that many batches are out wait, and go together when one is back', async () => {
    const gates: Array<() => void> = [];
    const sent: number[][] = [];
    const batcher = new TurnBatcher<Item, number>({
      maxBatch: 500,
      maxInFlight: 2,
      keyOf: (i) => i.key,
      send: async (items) => {
        sent.push(items.map((i) => i.n));
        await new Promise<void>((r) => gates.push(r));
        return items.map((i) => i.n * 10);
      },
      onFailure: 'alone',
    });
    const answers: Array<Promise<number>> = [];
    for (let n = 0; n < 2; n++) {
      answers.push(batcher.add({ key: `t${n}`, n }));
      await turn();
    }
    expect(sent).toEqual([[0], [1]]);
    for (let n = 2; n < 7; n++) {
      answers.push(batcher.add({ key: `t${n}`, n }));
      await turn();
    }
    expect(sent).toEqual([[0], [1]]); // two out: the five wait
    gates.shift()!();
    await turn();
    await turn();
    expect(sent).toEqual([[0], [1], [2, 3, 4, 5, 6]]);
    while (gates.length > 0) {
      gates.shift()!();
      await turn();
    }
    expect(await Promise.all(answers)).toEqual([0, 10, 20, 30, 40, 50, 60]);
  });

  it('sendAtOnce: a call with nothing waiting and a free place goes at once, the calls of its turn gather behind it', async () => {
    const { sent, batcher } = server({ maxInFlight: 1, sendAtOnce: true });
    const first = batcher.add({ key: 'a', n: 1 });
    expect(sent.map((b) => b.map((i) => i.n))).toEqual([[1]]); // before the turn ends
    const rest = [2, 3, 4].map((n) => batcher.add({ key: `t${n}`, n }));
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(sent.map((b) => b.map((i) => i.n))).toEqual([[1], [2, 3, 4]]);
  });

  it("onFailure { aloneIf }: a failed batch goes again item by item only when aloneIf says so, else every item gets the error as is", async () => {
    const refused = new Error('refused: nothing written');
    const unknown = new Error('connection lost: outcome unknown');
    for (const [error, again] of [
      [refused, true],
      [unknown, false],
    ] as const) {
      const sent: number[][] = [];
      const batcher = new TurnBatcher<Item, number>({
        maxBatch: 500,
        keyOf: (i) => i.key,
        send: async (items) => {
          sent.push(items.map((i) => i.n));
          if (items.some((i) => i.poison)) throw error;
          return items.map((i) => i.n * 10);
        },
        onFailure: { aloneIf: (e) => e === refused },
      });
      const out = await Promise.allSettled([1, 2, 3].map((n) => batcher.add({ key: `t${n}`, n, poison: n === 2 })));
      const seen = out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message));
      if (again) {
        expect(seen).toEqual([10, refused.message, 30]);
        expect(sent).toEqual([[1, 2, 3], [1], [2], [3]]);
      } else {
        expect(seen).toEqual([unknown.message, unknown.message, unknown.message]);
        expect(sent).toEqual([[1, 2, 3]]); // nothing sent twice
      }
    }
  });

  it('random turns: batches of at most maxBatch distinct keys, every item answered once with its own value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 600 }),
        // turns of calls: key from a pool of 40 (repeats in one turn), some refused, a few poisoned
        fc.array(fc.array(fc.record({ k: fc.nat(39), refused: fc.boolean(), poison: fc.nat(60).map((x) => x === 0) }), { maxLength: 900 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
        fc.boolean(),
        async (maxBatch, turns, maxInFlight, sendAtOnce) => {
          let out = 0;
          let mostOut = 0;
          const sent: Item[][] = [];
          const batcher = new TurnBatcher<Item, number>({
            maxBatch,
            maxInFlight,
            sendAtOnce,
            keyOf: (i) => i.key,
            send: async (items) => {
              sent.push([...items]);
              mostOut = Math.max(mostOut, ++out);
              try {
                await new Promise((r) => setImmediate(r));
                if (items.some((i) => i.poison)) throw new Error(`batch of ${items.length} failed`);
                return items.map((i) => (i.refused ? Promise.reject(new Error(`refused ${i.n}`)) : i.n * 10));
              } finally {
                out--;
              }
            },
            onFailure: 'alone',
          });
          const calls: Array<{ item: Item; answer: Promise<PromiseSettledResult<number>> }> = [];
          let n = 0;
          for (const t of turns) {
            for (const c of t) {
              const item: Item = { key: `t${c.k}`, n: n++, refused: c.refused, poison: c.poison };
              calls.push({ item, answer: batcher.add(item).then((value) => ({ status: 'fulfilled', value }) as const, (reason) => ({ status: 'rejected', reason }) as const) });
            }
            await turn();
          }
          await batcher.drain();
          // the bound holds, 'alone' resends included (one at a time, in their batch's place)
          if (maxInFlight !== undefined) expect(mostOut).toBeLessThanOrEqual(maxInFlight);
          for (const b of sent) {
            expect(b.length).toBeLessThanOrEqual(maxBatch);
            expect(new Set(b.map((i) => i.key)).size).toBe(b.length);
          }
          for (const { item, answer } of calls) {
            const a = await answer;
            if (item.poison) expect(a).toEqual({ status: 'rejected', reason: new Error('batch of 1 failed') });
            else if (item.refused) expect(a).toEqual({ status: 'rejected', reason: new Error(`refused ${item.n}`) });
            else expect(a).toEqual({ status: 'fulfilled', value: item.n * 10 });
          }
          // every item reached the server
          const times = new Map<number, number>();
          for (const b of sent) for (const i of b) times.set(i.n, (times.get(i.n) ?? 0) + 1);
          expect(times.size).toBe(calls.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});
