/**
 * Fair share between tenants (DESIGN §7, issue 16): `npm run bench:fairness [-- --store=redis]`,
 * on the memory store (default) or on Redis (a redis-server started for the run, see
 * ../redis/bench/fairness-store.ts).
 *
 * Scenario: one priority level, no limits. Tenant `big` queues 10,000 tasks at t = 0; tenants
 * `s1`..`s4` queue 50 tasks each, one every 40 ms from t = 0 (interactive users arriving while
 * the backlog drains). A worker claims CLAIM_BATCH tasks every simulated millisecond (a
 * ManualClock, so the waits do not depend on this machine's speed). Wait = claim time - createdAt.
 * Printed per tenant: p50 / p95 wait with fairness off and with fairness: 'tenant'.
 *
 * Claim cost: wall time of the claimSubmissions calls of the whole drain (the same creates and
 * claims in both modes), per claimed task, fairness on / off; best of ROUNDS rounds, the modes
 * alternating. On Redis the cost is the server's CPU time of the claim scripts (INFO
 * commandstats), not the wall time (a round trip each, noise of the shared machine).
 * Options (env): BENCH_FAIR_BIG (10,000), BENCH_FAIR_SMALL (50), BENCH_FAIR_ROUNDS (5).
 */
import { ManualClock, type NewTask, type TaskStore } from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { redisFairnessStores } from '../redis/bench/fairness-store';
import { percentile } from './lib/stats';

const STORE = process.argv.find((a) => a.startsWith('--store='))?.slice('--store='.length) ?? 'memory';
if (process.argv.includes('--help') || !['memory', 'redis'].includes(STORE)) {
  console.log('usage: npm run bench:fairness [-- --store=memory|redis]  (env BENCH_FAIR_BIG, BENCH_FAIR_SMALL, BENCH_FAIR_ROUNDS)');
  process.exit(process.argv.includes('--help') ? 0 : 1);
}

/** A store for one drain, and the cost of its claims so far in ns (wall time; Redis: its server CPU). */
interface BenchStores {
  open(clock: ManualClock, fair: boolean): Promise<TaskStore>;
  /** null: time the claim calls on the wall clock */
  claimCostNs: (() => Promise<number>) | null;
  close(): Promise<void>;
}

const memoryStores: BenchStores = {
  open: async (clock, fair) => new MemoryTaskStore({ clock, fairness: fair ? 'tenant' : undefined, historyLimit: 0 }),
  claimCostNs: null,
  close: async () => undefined,
};

const BIG = Number(process.env.BENCH_FAIR_BIG ?? 10_000);
const SMALL = Number(process.env.BENCH_FAIR_SMALL ?? 50);
const ROUNDS = Number(process.env.BENCH_FAIR_ROUNDS ?? 5);
const SMALL_TENANTS = ['s1', 's2', 's3', 's4'];
const SMALL_EVERY_MS = 40;
const CLAIM_BATCH = 4;
const T0 = 1_700_000_000_000;

let n = 0;
function task(tenantId: string): NewTask {
  return {
    id: `f${++n}`,
    idempotencyKey: null,
    type: 'job',
    payload: null,
    priority: 0,
    providerKey: 'p',
    accountId: null,
    tenantId,
    concurrencyKey: null,
    delayMs: 0,
    timeoutMs: null,
    maxAttempts: 1,
    idempotent: true,
  };
}

interface Outcome {
  waits: Map<string, number[]>;
  claimNs: number;
  claimed: number;
}

async function drain(stores: BenchStores, fair: boolean): Promise<Outcome> {
  const clock = new ManualClock(T0);
  const store = await stores.open(clock, fair);
  await store.init();
  const cost = stores.claimCostNs;
  await store.create(Array.from({ length: BIG }, () => task('big')));
  const waits = new Map<string, number[]>([['big', []], ...SMALL_TENANTS.map((t): [string, number[]] => [t, []])]);
  let smallLeft = SMALL;
  let claimNs = 0;
  let claimed = 0;
  const total = BIG + SMALL * SMALL_TENANTS.length;
  for (let ms = 0; claimed < total; ms++) {
    if (smallLeft > 0 && ms % SMALL_EVERY_MS === 0) {
      await store.create(SMALL_TENANTS.map(task));
      smallLeft--;
    }
    const start = cost ? await cost() : process.hrtime.bigint();
    const claim = await store.claimSubmissions({ owner: 'w', limit: CLAIM_BATCH, leaseMs: 60_000 });
    claimNs += cost ? (await cost()) - Number(start) : Number(process.hrtime.bigint() - (start as bigint));
    for (const t of claim.claimed) waits.get(t.tenantId!)!.push(clock.now() - t.createdAt);
    claimed += claim.claimed.length;
    clock.advance(1);
  }
  await store.close();
  return { waits, claimNs, claimed };
}

function row(name: string, off: number[], on: number[]): string {
  const f = (xs: number[], q: number) => String(Math.round(percentile(xs, q))).padStart(6);
  return `| ${name.padEnd(6)} | ${String(off.length).padStart(6)} | ${f(off, 0.5)} | ${f(off, 0.95)} | ${f(on, 0.5)} | ${f(on, 0.95)} |`;
}

async function main(): Promise<void> {
  const stores = STORE === 'redis' ? await redisFairnessStores() : memoryStores;
  let best = { off: Infinity, on: Infinity };
  let last: { off: Outcome; on: Outcome } | null = null;
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    const got: Partial<Record<'off' | 'on', Outcome>> = {};
    for (const fair of order) got[fair ? 'on' : 'off'] = await drain(stores, fair);
    best = { off: Math.min(best.off, got.off!.claimNs / got.off!.claimed), on: Math.min(best.on, got.on!.claimNs / got.on!.claimed) };
    last = { off: got.off!, on: got.on! };
  }
  await stores.close();
  const { off, on } = last!;
  console.log(`fair share (${STORE}): 1 tenant x ${BIG} tasks at t=0, ${SMALL_TENANTS.length} tenants x ${SMALL} (one every ${SMALL_EVERY_MS} ms), ${CLAIM_BATCH} claims per simulated ms`);
  console.log('| tenant |  tasks | off p50 | off p95 | on p50 | on p95 |  (wait, simulated ms)');
  console.log('|--------|--------|--------|--------|--------|--------|');
  for (const t of off.waits.keys()) console.log(row(t, off.waits.get(t)!, on.waits.get(t)!));
  console.log(`claim cost per claimed task (${stores.claimCostNs ? 'redis-server CPU' : 'wall time'}, best of ${ROUNDS}): off ${best.off.toFixed(0)} ns, on ${best.on.toFixed(0)} ns, ratio on/off ${(best.on / best.off).toFixed(2)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
