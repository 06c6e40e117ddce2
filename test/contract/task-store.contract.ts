/**
 * The ONE conformance suite every TaskStore passes (DESIGN §2–§4, every doc comment of
 * core/task-store.port.ts).
 *
 * How to run it against a store (one spec file per store, e.g. test/contract/redis.contract.spec.ts):
 *
 *   import { describeTaskStoreContract } from './task-store.contract';
 *   describeTaskStoreContract({
 *     name: 'redis',
 *     async create({ clock, agingIntervalMs }) { return new RedisTaskStore({ ..., prefix: unique(), clock, agingIntervalMs }); },
 *     async teardown() { await server.stop(); },
 *   });
 *
 * StoreFactory contract (stable; other specs depend on it):
 * - `create` is called once per test (and once per model-based run) and must return a FRESH,
 *   EMPTY, ISOLATED store (server stores: a new key prefix / schema / database) that uses
 *   `clock` for all time and the given `agingIntervalMs` (undefined = off). It may start servers
 *   lazily on first call. The suite calls `init()` on the store itself (init is idempotent, so
 *   calling it inside `create` too is fine) and `close()` after each test.
 * - `teardown` (optional) runs once after the whole suite: stop servers, drop schemas.
 *
 * Rules of the suite: all time comes from the ManualClock (never sleeps), task ids are UUIDs,
 * tasks are created in batches, nothing asserts on timing.
 */
import { ManualClock, type Fairness, type StorePolicies, type TaskStore } from '../../libs/priority-queue/src/core';
import { admissionCases } from './cases/admission.cases';
import { agingCases } from './cases/aging.cases';
import { attemptsCases } from './cases/attempts.cases';
import { boostCases } from './cases/boost.cases';
import { completeAndClaimCases } from './cases/complete-and-claim.cases';
import { fairnessCases } from './cases/fairness.cases';
import { createCases } from './cases/create.cases';
import { deadlineCases } from './cases/deadline.cases';
import { headOfLineCases } from './cases/head-of-line.cases';
import { idempotencyCases } from './cases/idempotency.cases';
import { keyIdentityCases } from './cases/key-identity.cases';
import { laneHeadCases } from './cases/lane-heads.cases';
import { explainCases } from './cases/explain.cases';
import { historyCases } from './cases/history.cases';
import { queryCases } from './cases/query.cases';
import { removalCases } from './cases/removal.cases';
import { requeueCases } from './cases/requeue.cases';
import { leaseCases } from './cases/lease.cases';
import { lifecycleCases } from './cases/lifecycle.cases';
import { orderCases } from './cases/order.cases';
import { pendingCancelCases } from './cases/pending-cancel.cases';
import { priorityChangeCases } from './cases/priority-change.cases';
import { slotCases } from './cases/slot.cases';
import { statsListPurgeCases } from './cases/stats-list-purge.cases';
import { sweepCases } from './cases/sweep.cases';
import { validationCases } from './cases/validation.cases';
import { wakeCases } from './cases/wake.cases';
import { Harness, T0 } from './harness';

export interface StoreFactory {
  /** Shown in the describe title, e.g. 'memory', 'redis', 'typeorm-postgres'. */
  name: string;
  /**
   * The DESIGN §7 policies the store implements (it must say the same in TaskStore.policies):
   * their cases run; for the others the suite expects NotSupportedByStoreError. Absent = none.
   */
  policies?: StorePolicies;
  /** A fresh, empty, isolated store using `clock` (see the header of this file). */
  create(opts: { clock: ManualClock; agingIntervalMs?: number; historyLimit?: number; fairness?: Fairness }): Promise<TaskStore>;
  /** Once after the suite. */
  teardown?(): Promise<void>;
}

/** What each case file gets: a way to open a fresh store for the current test. */
export interface ContractContext {
  readonly name: string;
  /** The DESIGN §7 policies the store implements (StoreFactory.policies). */
  readonly policies: StorePolicies;
  /** A fresh initialised store with a ManualClock at T0; closed automatically after the test. */
  open(opts?: { agingIntervalMs?: number; historyLimit?: number; fairness?: Fairness }): Promise<Harness>;
}

export function describeTaskStoreContract(factory: StoreFactory): void {
  describe(`TaskStore contract: ${factory.name}`, () => {
    const opened: TaskStore[] = [];
    const ctx: ContractContext = {
      name: factory.name,
      policies: { fairness: factory.policies?.fairness === true, boost: factory.policies?.boost === true },
      async open(opts = {}) {
        const clock = new ManualClock(T0);
        const store = await factory.create({ clock, agingIntervalMs: opts.agingIntervalMs, historyLimit: opts.historyLimit, fairness: opts.fairness });
        opened.push(store);
        await store.init();
        return new Harness(store, clock);
      },
    };

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });
    afterAll(async () => {
      await factory.teardown?.();
    });

    describe('create, get, copies', () => createCases(ctx));
    describe('idempotency keys (DESIGN §1)', () => idempotencyCases(ctx));
    describe('keys compared exactly: case and normalisation form', () =>
      keyIdentityCases(ctx, [
        ['acme', 'ACME'],
        ['\u00e9t\u00e9', 'e\u0301te\u0301'],
        ['\u00df', 'ss'],
      ]));
    // MariaDB / MySQL: schema v7 compares keys in a NO PAD collation (utf8mb4_bin is PAD SPACE)
    describe('keys compared exactly: trailing spaces', () =>
      keyIdentityCases(ctx, [
        ['acme', 'acme '],
        ['k', 'k  '],
      ]));
    describe('order (DESIGN §2)', () => orderCases(ctx));
    describe('order across lanes: stale heads, tie-breaks (DESIGN §2)', () => laneHeadCases(ctx));
    describe('aging (DESIGN §2)', () => agingCases(ctx));
    describe('admission limits (DESIGN §3)', () => admissionCases(ctx));
    describe('no head-of-line blocking across many lanes (DESIGN §3)', () => headOfLineCases(ctx));
    describe('slots: freed once, never leaked (DESIGN §3)', () => slotCases(ctx));
    describe('slots: a pending task holds none, its cancel frees none (DESIGN §3)', () => pendingCancelCases(ctx));
    describe('leases, recovery, fencing (DESIGN §4)', () => leaseCases(ctx));
    describe('submit / poll / complete / retry / cancel', () => lifecycleCases(ctx));
    describe('changePriority', () => priorityChangeCases(ctx));
    describe('deadlines', () => deadlineCases(ctx));
    describe('attempts and nextPollAt (DESIGN §4)', () => attemptsCases(ctx));
    describe('stats, list, purge', () => statsListPurgeCases(ctx));
    describe('sweepExpired: the sweep lease', () => sweepCases(ctx));
    describe('subscribe: wake-ups', () => wakeCases(ctx));
    describe('bad input through PriorityQueue / AdmissionControl writes nothing', () => validationCases(ctx));
    describe('retry of a finished task (requeue)', () => requeueCases(ctx));
    describe('explain', () => explainCases(ctx));
    describe('history', () => historyCases(ctx));
    describe('query', () => queryCases(ctx));
    describe('fair share between tenants (DESIGN §7)', () => fairnessCases(ctx));
    describe('deadline boost (DESIGN §7)', () => boostCases(ctx));
    describe('removeOnComplete / removeOnFail', () => removalCases(ctx));
    describe('completeAndClaim: the completes then the claim, one call', () => completeAndClaimCases(ctx));
  });
}
