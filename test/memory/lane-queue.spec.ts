import fc from 'fast-check';
import { LaneQueue } from '../../libs/priority-queue/src/stores/memory/lane-queue';
import { Q_TOK, TaskTable } from '../../libs/priority-queue/src/stores/memory/task-table';

/** A queued task of the model: inline keys, a creation rank (0 = unranked) and the tie value. */
interface Entry {
  k1: number;
  k2: number;
  rank: number;
  tie: number;
}

/** The order LaneQueue must keep: k1, k2, then ranks when both are non-zero, else the tie. */
function compare(a: Entry, b: Entry): number {
  if (a.k1 !== b.k1) return a.k1 - b.k1;
  if (a.k2 !== b.k2) return a.k2 - b.k2;
  if (a.rank !== 0 && b.rank !== 0) return a.rank - b.rank;
  return a.tie - b.tie;
}

const op = fc.oneof(
  // small key ranges force ties on k1 and k2; `ascending` pushes after every key so far (the
  // run's append path), the others land anywhere (the insert buffer, merges)
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('push' as const), k1: fc.integer({ min: -3, max: 3 }), k2: fc.integer({ min: 0, max: 2 }), ranked: fc.boolean(), tie: fc.nat(1000) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ascending' as const), n: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('removeLive' as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('pop' as const), n: fc.integer({ min: 1, max: 30 }) }) },
);

describe('LaneQueue (memory store lanes)', () => {
  it('its head is always the best live entry, through appends, buffered pushes, merges, lazy removals and rebuilds', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const table = new TaskTable();
        const live = new Map<number, Entry>();
        const ties = new Map<number, number>();
        const q = new LaneQueue(table, (a, b) => ties.get(a)! - ties.get(b)!);
        let token = 0;
        let top = 0;
        const push = (e: Entry) => {
          const s = table.alloc();
          // unique ties (as (createdAt, seq) are in the store): no two entries are equal
          e.tie = e.tie * 100_000 + s;
          if (e.rank !== 0) e.rank = e.tie + 1;
          table.setNum(s, Q_TOK, ++token);
          ties.set(s, e.tie);
          live.set(s, e);
          q.push(s, e.k1, e.k2, token, 0, e.rank);
        };
        const modelHead = () => {
          let best: number | undefined;
          for (const [s, e] of live) if (best === undefined || compare(e, live.get(best)!) < 0) best = s;
          return best;
        };
        const check = () => {
          const head = modelHead();
          expect(q.top()).toBe(head);
          if (head !== undefined) {
            const e = live.get(head)!;
            expect([q.topK1(), q.topK2(), q.topRank(), q.topToken()]).toEqual([e.k1, e.k2, e.rank, table.num(head, Q_TOK)]);
          }
          // dead entries never outgrow the live ones by much
          expect(q.length).toBeLessThanOrEqual(2 * live.size + 34);
        };
        const pick = (n: number) => [...live.keys()][n % live.size];
        for (const o of ops) {
          // a rank, when there is one, orders like the tie (as creation ranks order like
          // (createdAt, seq) in the store): else the order would not be a total order
          if (o.kind === 'push') push({ k1: o.k1, k2: o.k2, rank: o.ranked ? o.tie + 1 : 0, tie: o.tie });
          else if (o.kind === 'ascending') {
            for (let i = 0; i < o.n; i++) push({ k1: 10 + ++top, k2: 0, rank: 1, tie: 0 });
          } else if (o.kind === 'remove' && live.size > 0) {
            const s = pick(o.pick);
            table.setNum(s, Q_TOK, 0); // the owner changes the token first, then reports it
            live.delete(s);
            q.noteRemoved();
          } else if (o.kind === 'removeLive' && live.size > 0) {
            const s = pick(o.pick);
            const tok = table.num(s, Q_TOK);
            table.setNum(s, Q_TOK, 0);
            live.delete(s);
            q.removeLive(s, tok);
          } else if (o.kind === 'pop') {
            for (let i = 0; i < o.n && live.size > 0; i++) {
              check();
              const s = q.top()!;
              q.pop();
              table.setNum(s, Q_TOK, 0);
              live.delete(s);
            }
          }
          check();
        }
        expect(q.liveItems().sort((a, b) => a - b)).toEqual([...live.keys()].sort((a, b) => a - b));
        // drained, the lane gives every live entry in order
        const rest: number[] = [];
        for (let s = q.top(); s !== undefined; s = q.top()) {
          rest.push(s);
          q.pop();
          table.setNum(s, Q_TOK, 0);
        }
        expect(rest).toEqual([...live.entries()].sort((a, b) => compare(a[1], b[1])).map(([s]) => s));
      }),
      { numRuns: 300 },
    );
  });
});
