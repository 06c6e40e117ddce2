import { LazyHeap } from '../../libs/priority-queue/src/stores/memory/lazy-heap';
import { rng } from '../contract/harness';

interface Item {
  name: number;
  a: number;
  b: number;
  tie: number;
  token: number;
}

class ItemHeap extends LazyHeap<Item> {
  constructor() {
    super((x, y) => x.tie - y.tie);
  }
  protected isLive(item: Item, token: number): boolean {
    return item.token === token;
  }
}

const cmp = (x: Item, y: Item) => x.a - y.a || x.b - y.b || x.tie - y.tie;

describe('LazyHeap (memory store)', () => {
  it('pops live items in (k1, k2, tie) order through pushes, lazy removals, re-keys and compactions', () => {
    for (const seed of [1, 2, 3, 4]) {
      const r = rng(seed);
      const heap = new ItemHeap();
      const live = new Map<number, Item>();
      let token = 0;
      let name = 0;
      for (let step = 0; step < 4000; step++) {
        const op = r(11);
        if (op < 5) {
          // small key ranges force ties on k1 and k2
          const it: Item = { name: ++name, a: r(5) - 2, b: r(3), tie: r(1_000_000), token: ++token };
          heap.push(it, it.a, it.b, it.token);
          live.set(it.name, it);
        } else if (op < 7 && live.size > 0) {
          const victims = [...live.values()];
          const v = victims[r(victims.length)];
          v.token = 0;
          heap.noteRemoved();
          live.delete(v.name);
        } else if (op < 8 && live.size > 0) {
          const victims = [...live.values()];
          const v = victims[r(victims.length)];
          // the owner changes the token first, then reports the dead entry
          v.token = ++token;
          heap.noteRemoved();
          v.a = r(5) - 2;
          heap.push(v, v.a, v.b, v.token);
        } else if (op < 9 && live.size > 0) {
          // removal of a live entry that may be the top one (removeLive)
          const victims = [...live.values()];
          const v = victims[r(victims.length)];
          const old = v.token;
          v.token = 0;
          heap.removeLive(v, old);
          live.delete(v.name);
        } else {
          const expected = [...live.values()].sort(cmp)[0];
          const top = heap.top();
          expect(top?.name).toBe(expected?.name);
          if (top) {
            expect([heap.topK1(), heap.topK2()]).toEqual([top.a, top.b]);
            heap.pop();
            top.token = 0;
            live.delete(top.name);
          }
        }
        // dead entries never outgrow live ones by much (compaction)
        expect(heap.length).toBeLessThanOrEqual(2 * live.size + 34);
      }
      const rest: number[] = [];
      for (let t = heap.top(); t !== undefined; t = heap.top()) {
        rest.push(t.name);
        heap.pop();
        t.token = 0;
      }
      expect(rest).toEqual([...live.values()].sort(cmp).map((x) => x.name));
    }
  });

  it('liveItems lists exactly the live entries', () => {
    const heap = new ItemHeap();
    const items = Array.from({ length: 10 }, (_, i): Item => ({ name: i, a: 10 - i, b: 0, tie: 0, token: i + 1 }));
    for (const it of items) heap.push(it, it.a, it.b, it.token);
    items[3].token = 0;
    heap.noteRemoved();
    expect(heap.liveItems().map((x) => x.name).sort((x, y) => x - y)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9]);
  });
});
