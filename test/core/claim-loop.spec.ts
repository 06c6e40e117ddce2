import fc from 'fast-check';
import type { RefusalReason } from '../../libs/priority-queue/src/core/admission';
import { gcra } from '../../libs/priority-queue/src/core/admission';
import { claimFromLanes, type ReadyLaneSource } from '../../libs/priority-queue/src/core/claim-loop';
import { consumeRoom, laneRefusalReason, type LaneRoom, type ProviderRoom, type SlotRoom } from '../../libs/priority-queue/src/core/lane-admission';
import { compareOrder, type OrderFields } from '../../libs/priority-queue/src/core/order-key';

/**
 * core's claim loop over a plain in-test source, against the rule of DESIGN §3 written the
 * naive way: each claim is the first task, in order, whose limits all have room, every claim
 * counting against the next. Hundreds of lanes sharing a few providers, accounts, tenants and
 * concurrency keys, so that most lanes are refused and parked in a long claim.
 */
interface TestTask extends OrderFields {
  lane: number;
}

interface World {
  providers: ProviderRoom[];
  slots: SlotRoom[];
  lanes: LaneRoom[];
  tasks: TestTask[];
}

const slot = fc.record({ inUse: fc.integer({ min: 0, max: 3 }), limit: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }) });
const provider = fc.record({
  paused: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  qps: fc.option(fc.integer({ min: 1, max: 50 }), { nil: null }),
  burst: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
  tat: fc.integer({ min: 0, max: 2_000 }),
});

const world: fc.Arbitrary<World> = fc
  .record({
    providers: fc.array(provider, { minLength: 1, maxLength: 4 }),
    slots: fc.array(slot, { minLength: 1, maxLength: 12 }),
    laneCount: fc.integer({ min: 1, max: 300 }),
  })
  .chain(({ providers, slots, laneCount }) =>
    fc
      .record({
        lanes: fc.array(
          fc.record({
            provider: fc.nat(providers.length - 1),
            account: fc.option(fc.nat(slots.length - 1), { nil: null }),
            tenant: fc.option(fc.nat(slots.length - 1), { nil: null }),
            concurrencyKey: fc.option(fc.nat(slots.length - 1), { nil: null }),
          }),
          { minLength: laneCount, maxLength: laneCount },
        ),
        tasks: fc.array(
          fc.record({
            lane: fc.nat(laneCount - 1),
            priority: fc.integer({ min: -3, max: 3 }),
            runAt: fc.integer({ min: 0, max: 1_000 }),
            createdAt: fc.integer({ min: 0, max: 1_000 }),
          }),
          { maxLength: 600 },
        ),
      })
      .map(({ lanes, tasks }) => ({
        providers,
        slots,
        // a slot shared by several limits of one lane would count its claim twice: keep them apart
        lanes: lanes.map((l) => ({
          provider: providers[l.provider],
          account: l.account === null ? null : slots[l.account],
          tenant: l.tenant === null || l.tenant === l.account ? null : slots[l.tenant],
          concurrencyKey: l.concurrencyKey === null || l.concurrencyKey === l.account || l.concurrencyKey === l.tenant ? null : slots[l.concurrencyKey],
        })),
        tasks: tasks.map((t, i) => ({ ...t, seq: i + 1 })),
      })),
  );

/** A deep copy of the world's mutable state (providers and slots shared by lanes stay shared). */
function clone(w: World): World {
  const providers = w.providers.map((p) => ({ ...p }));
  const slots = w.slots.map((s) => ({ ...s }));
  const lanes = w.lanes.map((l) => ({
    provider: providers[w.providers.indexOf(l.provider)],
    account: l.account === null ? null : slots[w.slots.indexOf(l.account)],
    tenant: l.tenant === null ? null : slots[w.slots.indexOf(l.tenant)],
    concurrencyKey: l.concurrencyKey === null ? null : slots[w.slots.indexOf(l.concurrencyKey)],
  }));
  return { providers, slots, lanes, tasks: w.tasks };
}

/** DESIGN §3 the naive way: every step scans all tasks in order for the first one with room. */
function reference(w: World, limit: number, now: number): number[] {
  const left = [...w.tasks].sort((a, b) => compareOrder(a, b));
  const out: number[] = [];
  const hasRoom = (s: SlotRoom | null) => s === null || s.limit === null || s.inUse < s.limit;
  while (out.length < limit) {
    const i = left.findIndex((t) => {
      const l = w.lanes[t.lane];
      const p = l.provider;
      if (p.paused) return false;
      if (p.qps !== null && !gcra(p.tat, now, p.qps, p.burst ?? 1).allowed) return false;
      return hasRoom(l.account) && hasRoom(l.tenant) && hasRoom(l.concurrencyKey);
    });
    if (i < 0) break;
    const [t] = left.splice(i, 1);
    const l = w.lanes[t.lane];
    if (l.provider.qps !== null) l.provider.tat = gcra(l.provider.tat, now, l.provider.qps, l.provider.burst ?? 1).tat;
    for (const s of [l.account, l.tenant, l.concurrencyKey]) if (s !== null) s.inUse++;
    out.push(t.seq);
  }
  return out;
}

/** The lanes as a ReadyLaneSource: each lane's tasks sorted, the ready lanes scanned for the best head. */
class ArraySource implements ReadyLaneSource<number, number> {
  private readonly queues: TestTask[][];
  private readonly ready = new Set<number>();
  readonly parked = new Map<number, RefusalReason>();

  constructor(private readonly w: World) {
    this.queues = w.lanes.map(() => []);
    for (const t of w.tasks) this.queues[t.lane].push(t);
    this.queues.forEach((q, i) => {
      q.sort((a, b) => compareOrder(a, b));
      if (q.length > 0) this.ready.add(i);
    });
  }

  first(): number | null {
    let best: number | null = null;
    for (const i of this.ready) if (best === null || compareOrder(this.queues[i][0], this.queues[best][0]) < 0) best = i;
    return best;
  }

  room(lane: number): LaneRoom {
    return this.w.lanes[lane];
  }

  park(lane: number, reason: RefusalReason): void {
    expect(this.parked.has(lane)).toBe(false); // each lane parks at most once per claim
    this.parked.set(lane, reason);
    this.ready.delete(lane);
  }

  take(lane: number): number {
    const t = this.queues[lane].shift()!;
    if (this.queues[lane].length === 0) this.ready.delete(lane);
    return t.seq;
  }
}

describe('core claim loop (claimFromLanes over laneRefusalReason / consumeRoom)', () => {
  it('claims what the naive rule claims, in the same order, and leaves the limits as it does', () => {
    fc.assert(
      fc.property(world, fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 3_000 }), (w, limit, now) => {
        const expectedWorld = clone(w);
        const expected = reference(expectedWorld, limit, now);
        const actualWorld = clone(w);
        const src = new ArraySource(actualWorld);
        const out: number[] = [];
        expect(claimFromLanes(src, limit, now, out)).toBe(true);
        expect(out).toEqual(expected);
        expect(actualWorld.providers).toEqual(expectedWorld.providers);
        expect(actualWorld.slots).toEqual(expectedWorld.slots);
        // a parked lane is still refused when the claim ends (claims only take room)
        for (const lane of src.parked.keys()) expect(laneRefusalReason(actualWorld.lanes[lane], now)).not.toBeNull();
      }),
      { numRuns: 150 },
    );
  });

  it('refuses in the order pause, rate, account, tenant, concurrency key', () => {
    const full: SlotRoom = { inUse: 1, limit: 1 };
    const free = (): SlotRoom => ({ inUse: 0, limit: 1 });
    const p = (paused: boolean, qps: number | null, tat = 0): ProviderRoom => ({ paused, qps, burst: 1, tat });
    const now = 10_000;
    expect(laneRefusalReason({ provider: p(true, 1, now + 5_000), account: full, tenant: full, concurrencyKey: full }, now)).toBe('paused');
    expect(laneRefusalReason({ provider: p(false, 1, now + 5_000), account: full, tenant: full, concurrencyKey: full }, now)).toBe('rate');
    expect(laneRefusalReason({ provider: p(false, null), account: full, tenant: full, concurrencyKey: full }, now)).toBe('account');
    expect(laneRefusalReason({ provider: p(false, null), account: free(), tenant: full, concurrencyKey: full }, now)).toBe('tenant');
    expect(laneRefusalReason({ provider: p(false, null), account: null, tenant: null, concurrencyKey: full }, now)).toBe('concurrencyKey');
    const room: LaneRoom = { provider: p(false, 2), account: free(), tenant: null, concurrencyKey: { inUse: 0, limit: null } };
    expect(laneRefusalReason(room, now)).toBeNull();
    consumeRoom(room, now);
    expect(room.account!.inUse).toBe(1);
    expect(room.concurrencyKey!.inUse).toBe(1);
    expect(room.provider.tat).toBe(now + 500);
    expect(laneRefusalReason(room, now)).toBe('rate'); // burst 1: the next token is 500 ms away
  });
});
