import fc from 'fast-check';
import { BucketQueue } from '../../libs/priority-queue/src/stores/memory/bucket-queue';
import { FLAGS, Q_TOK, TaskTable } from '../../libs/priority-queue/src/stores/memory/task-table';

describe('BucketQueue (memory store priority buckets)', () => {
  it('top is always the live entry with the smallest (runAt, seq), through in-order and late pushes and removals', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), back: fc.integer({ min: -3, max: 5 }) }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('removeTop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const table = new TaskTable();
        const q = new BucketQueue(table);
        const live = new Map<number, { runAt: number; seq: number }>();
        let clock = 1000;
        let seq = 0;
        let token = 0;
        const modelTop = () => {
          let best: number | undefined;
          for (const [s, k] of live) {
            const b = best === undefined ? undefined : live.get(best)!;
            if (b === undefined || k.runAt < b.runAt || (k.runAt === b.runAt && k.seq < b.seq)) best = s;
          }
          return best;
        };
        const remove = (s: number) => {
          const tok = table.num(s, Q_TOK);
          table.setNum(s, Q_TOK, 0);
          q.removeLive(s, tok);
          live.delete(s);
        };
        for (const o of ops) {
          if (o.kind === 'push') {
            clock += o.back; // a negative step: a late entry
            const s = table.alloc();
            table.setByte(s, FLAGS, 0);
            const tok = ++token;
            table.setNum(s, Q_TOK, tok);
            q.push(s, clock, ++seq, tok);
            live.set(s, { runAt: clock, seq });
          } else if (o.kind === 'remove' && live.size > 0) {
            remove([...live.keys()][o.pick % live.size]);
          } else if (o.kind === 'removeTop' && live.size > 0) {
            remove(q.top()!);
          }
          expect(q.top()).toBe(modelTop());
        }
        expect(q.liveItems().sort((a, b) => a - b)).toEqual([...live.keys()].sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });

  it('drops dead entries from the middle (compaction) and keeps FIFO order', () => {
    const table = new TaskTable();
    const q = new BucketQueue(table);
    const slots: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      const s = table.alloc();
      table.setByte(s, FLAGS, 0);
      table.setNum(s, Q_TOK, i + 1);
      q.push(s, 5, i + 1, i + 1);
      slots.push(s);
    }
    // remove all but every 10th, never the front: dead entries pile up in the middle
    for (let i = 1; i < slots.length; i++) {
      if (i % 10 === 0) continue;
      const tok = table.num(slots[i], Q_TOK);
      table.setNum(slots[i], Q_TOK, 0);
      q.removeLive(slots[i], tok);
    }
    expect(q.liveItems().length).toBe(1_000);
    for (let i = 0; i < slots.length; i += 10) {
      expect(q.top()).toBe(slots[i]);
      const tok = table.num(slots[i], Q_TOK);
      table.setNum(slots[i], Q_TOK, 0);
      q.removeLive(slots[i], tok);
    }
    expect(q.top()).toBeUndefined();
  });
});
