import { LeaseCache, type Leased } from '../../libs/priority-queue/src/stores/shared/lease-cache';

interface Entry extends Leased {
  what: string;
}

const entry = (leaseId: string, version: number, what = `${leaseId}@${version}`): Entry => ({ leaseId, version, what });

describe('LeaseCache (shared by the Redis and PostgreSQL completes)', () => {
  it('answers only a fence that names the entry: same lease id and version', () => {
    const c = new LeaseCache<Entry>();
    c.set('a', entry('L1', 3));
    expect(c.match({ id: 'a', leaseId: 'L1', version: 3 })?.what).toBe('L1@3');
    expect(c.match({ id: 'a', leaseId: 'L1', version: 4 })).toBeUndefined(); // the task changed since
    expect(c.match({ id: 'a', leaseId: 'L2', version: 3 })).toBeUndefined(); // another lease
    expect(c.match({ id: 'b', leaseId: 'L1', version: 3 })).toBeUndefined();
  });

  it('a new entry for a task replaces the old one; delete and clear forget', () => {
    const c = new LeaseCache<Entry>();
    c.set('a', entry('L1', 3));
    c.set('a', entry('L1', 4));
    expect(c.match({ id: 'a', leaseId: 'L1', version: 3 })).toBeUndefined();
    expect(c.match({ id: 'a', leaseId: 'L1', version: 4 })).toBeDefined();
    expect(c.size).toBe(1);
    c.delete('a');
    expect(c.match({ id: 'a', leaseId: 'L1', version: 4 })).toBeUndefined();
    c.set('b', entry('L', 1));
    c.clear();
    expect(c.size).toBe(0);
  });

  it('holds at most max entries: the one set longest ago goes first (a re-set counts as new)', () => {
    const max = 1000;
    const c = new LeaseCache<Entry>(max);
    for (let i = 0; i < max; i++) c.set(`t${i}`, entry(`L${i}`, 1));
    c.set('t0', entry('L0', 2)); // t0 is now the newest
    for (let i = max; i < max + 10; i++) c.set(`t${i}`, entry(`L${i}`, 1));
    expect(c.size).toBe(max);
    expect(c.match({ id: 't0', leaseId: 'L0', version: 2 })).toBeDefined();
    for (let i = 1; i <= 10; i++) expect(c.match({ id: `t${i}`, leaseId: `L${i}`, version: 1 })).toBeUndefined();
    for (let i = 11; i < max + 10; i++) expect(c.match({ id: `t${i}`, leaseId: `L${i}`, version: 1 })).toBeDefined();
  });
});
