import fc from 'fast-check';
import { TaskIdSequence } from '../../libs/priority-queue/src/core/task-ids';
import { IdIndex } from '../../libs/priority-queue/src/stores/memory/id-index';

/** An index over `seq`'s ids and the first `n` ids of `seq` (ids[k] is the (k+1)th). */
function setup(n: number): { ix: IdIndex; ids: string[]; seq: TaskIdSequence } {
  const seq = new TaskIdSequence();
  const ids = Array.from({ length: n }, () => seq.next());
  return { ix: new IdIndex(seq), ids, seq };
}

describe('IdIndex', () => {
  it("keeps the store's own ids and any other id; refuses a taken id without replacing it", () => {
    const { ix, ids } = setup(5001);
    const foreign = new TaskIdSequence().next();
    expect(ix.add(ids[0], 10)).toBe(true);
    expect(ix.add(ids[5000], 11)).toBe(true); // another page
    expect(ix.add('custom-id', 12)).toBe(true);
    expect(ix.add(ids[0].toUpperCase(), 13)).toBe(true); // not the same id
    expect(ix.add(foreign, 14)).toBe(true); // another sequence's id
    expect(ix.add(ids[0], 99)).toBe(false);
    expect(ix.add('custom-id', 99)).toBe(false);
    expect(ix.size).toBe(5);
    expect([ids[0], ids[5000], 'custom-id', ids[0].toUpperCase(), foreign].map((id) => ix.get(id))).toEqual([10, 11, 12, 13, 14]);
    expect(ix.get(ids[1])).toBeUndefined();
    expect(ix.get(ids[0].slice(0, 35) + 'g')).toBeUndefined();
    ix.delete(ids[0]);
    ix.delete(ids[0]);
    ix.delete('custom-id');
    expect(ix.get(ids[0])).toBeUndefined();
    expect(ix.get('custom-id')).toBeUndefined();
    expect(ix.size).toBe(3);
    expect(ix.add(ids[0], 20)).toBe(true);
    expect(ix.get(ids[0])).toBe(20);
  });

  it('behaves like a Map under any sequence of adds and deletes', () => {
    const { ids, seq } = setup(20_001);
    const others = setup(51).ids;
    const idArb = fc.oneof(
      fc.integer({ min: 0, max: 20_000 }).map((k) => ids[k]),
      fc.integer({ min: 0, max: 50 }).map((k) => others[k]),
      fc.integer({ min: 0, max: 50 }).map((k) => ids[k].toUpperCase()),
      fc.string({ maxLength: 40 }),
    );
    const opArb = fc.tuple(fc.constantFrom('add', 'delete', 'get'), idArb, fc.nat(1_000_000));
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
        const ix = new IdIndex(seq);
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

describe('TaskIdSequence', () => {
  it('makes distinct UUID-shaped ids and knows the number of each of its own ids only', () => {
    const seq = new TaskIdSequence();
    const ids = Array.from({ length: 10_000 }, () => seq.next());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids.map((id) => seq.numberOf(id))).toEqual(ids.map((_, k) => k + 1));
    const other = new TaskIdSequence();
    for (const id of [other.next(), ids[0].toUpperCase(), ids[0].slice(0, 35), ids[0] + '0', ids[0].slice(0, 24) + '000000000000', 'x'.repeat(36)]) {
      expect(seq.numberOf(id)).toBe(-1);
    }
  });

  it('after 2^48 ids takes a new prefix and still tells the ids of both prefixes apart', () => {
    const seq = new TaskIdSequence();
    const first = seq.next();
    (seq as unknown as { counter: number }).counter = 2 ** 48 - 2; // the last ids of the first prefix
    const last = seq.next();
    const next = seq.next();
    expect(next.slice(0, 24)).not.toBe(first.slice(0, 24));
    expect(last.slice(0, 24)).toBe(first.slice(0, 24));
    const numbers = [first, last, next].map((id) => seq.numberOf(id));
    expect(numbers).toEqual([1, 2 ** 48 - 1, 2 ** 48 + 1]);
    const ix = new IdIndex(seq);
    [first, last, next].forEach((id, k) => expect(ix.add(id, k)).toBe(true));
    expect([first, last, next].map((id) => ix.get(id))).toEqual([0, 1, 2]);
  });
});
