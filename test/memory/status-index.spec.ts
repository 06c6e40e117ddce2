import { StatusIndex } from '../../libs/priority-queue/src/stores/memory/status-index';
import { STATUS_COUNT } from '../../libs/priority-queue/src/stores/memory/task-table';
import { rng } from '../contract/harness';

interface Item {
  id: string;
  seq: number;
  sc: number;
}

describe('StatusIndex (memory store)', () => {
  it('lists one status by seq with exclusive paging, across chunks and every bit position', () => {
    const r = rng(9);
    const index = new StatusIndex();
    const items = new Map<number, Item>();
    // seqs spread over several 4096-chunks, including 0..31 boundaries of words
    const seqs = [1, 31, 32, 33, 63, 4095, 4096, 4097, 8191, 8192, 20_000, 20_031];
    for (let s = 100; s < 3000; s += 1 + r(7)) seqs.push(s);
    for (const seq of seqs) {
      const it = { id: `t${seq}`, seq, sc: r(STATUS_COUNT) };
      items.set(seq, it);
      index.add(seq, seq, it.sc); // slot = seq here
    }
    for (let step = 0; step < 2000; step++) {
      const all = [...items.values()];
      const it = all[r(all.length)];
      if (r(5) === 0) {
        index.remove(it.seq, it.sc);
        items.delete(it.seq);
      } else {
        const from = it.sc;
        it.sc = r(STATUS_COUNT);
        index.move(it.seq, from, it.sc);
      }
    }
    for (let sc = 0; sc < STATUS_COUNT; sc++) {
      const expected = [...items.values()].filter((x) => x.sc === sc).sort((a, b) => a.seq - b.seq).map((x) => x.seq);
      const paged: number[] = [];
      let after = 0;
      for (;;) {
        const page = index.list(sc, 7, after);
        paged.push(...page);
        if (page.length < 7) break;
        after = page[page.length - 1];
      }
      expect(paged).toEqual(expected);
      expect(index.list(sc, 1000, 4096)).toEqual(expected.filter((s) => s > 4096));
      expect(index.list(sc, 0, 0)).toEqual([]);
    }
    expect(index.find((slot) => items.get(slot)?.id === 't20031')).toBe(items.has(20_031) ? 20_031 : -1);
  });
});
