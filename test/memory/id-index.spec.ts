import fc from 'fast-check';
import { IdIndex } from '../../libs/priority-queue/src/stores/memory/id-index';

const PREFIX = '0b1c2d3e-4f50-4617-8a9b-';
const seqId = (n: number) => PREFIX + n.toString(16).padStart(12, '0');

describe('IdIndex', () => {
  it('keeps queue-style ids and any other id; refuses a taken id without replacing it', () => {
    const ix = new IdIndex();
    expect(ix.add(seqId(1), 10)).toBe(true);
    expect(ix.add(seqId(5000), 11)).toBe(true); // another page
    expect(ix.add('custom-id', 12)).toBe(true);
    expect(ix.add(seqId(1).toUpperCase(), 13)).toBe(true); // not the same id
    expect(ix.add('ffffffff-0000-4000-8000-000000000001', 14)).toBe(true); // other prefix
    expect(ix.add(seqId(1), 99)).toBe(false);
    expect(ix.add('custom-id', 99)).toBe(false);
    expect(ix.size).toBe(5);
    expect([seqId(1), seqId(5000), 'custom-id', seqId(1).toUpperCase(), 'ffffffff-0000-4000-8000-000000000001'].map((id) => ix.get(id))).toEqual([10, 11, 12, 13, 14]);
    expect(ix.get(seqId(2))).toBeUndefined();
    expect(ix.get(seqId(1).slice(0, 35) + 'g')).toBeUndefined();
    ix.delete(seqId(1));
    ix.delete(seqId(1));
    ix.delete('custom-id');
    expect(ix.get(seqId(1))).toBeUndefined();
    expect(ix.get('custom-id')).toBeUndefined();
    expect(ix.size).toBe(3);
    expect(ix.add(seqId(1), 20)).toBe(true);
    expect(ix.get(seqId(1))).toBe(20);
  });

  it('behaves like a Map under any sequence of adds and deletes', () => {
    const otherPrefix = 'aaaaaaaa-bbbb-4ccc-8ddd-';
    const idArb = fc.oneof(
      fc.integer({ min: 0, max: 20_000 }).map(seqId),
      fc.integer({ min: 0, max: 50 }).map((n) => otherPrefix + n.toString(16).padStart(12, '0')),
      fc.string({ maxLength: 40 }),
    );
    const opArb = fc.tuple(fc.constantFrom('add', 'delete', 'get'), idArb, fc.nat(1_000_000));
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
        const ix = new IdIndex();
        const model = new Map<string, number>();
        for (const [op, id, slot] of ops) {
          if (op === 'add') {
            const fresh = !model.has(id);
            expect(ix.add(id, slot)).toBe(fresh);
            if (fresh) model.set(id, slot);
          } else if (op === 'delete') {
            ix.delete(id);
            model.delete(id);
          }
          expect(ix.get(id)).toBe(model.get(id));
          expect(ix.size).toBe(model.size);
        }
        for (const [id, slot] of model) expect(ix.get(id)).toBe(slot);
      }),
      { numRuns: 300 },
    );
  });
});
