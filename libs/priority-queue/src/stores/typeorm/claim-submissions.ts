import { randomUUID } from 'node:crypto';
import { compareOrder } from '../../core/order-key';
import { selectClaims } from './claim-loop';
import { TaskStatus, type Task } from '../../core/task';
import type { BoostedTask, ClaimRequest, SubmissionClaim } from '../../core/task-store.port';
import type { StoreContext } from './context';
import { writesLater, type Exec } from './db';
import { admissionKeys } from './lane-admission';
import { fairTagOf, laneKeysOf, num, rowToTask } from './rows';
import { applyDueBoosts } from './sql/apply-boosts';
import { advanceVirtualTimes } from './sql/fair-tags';
import { takeReleases, unparkDueRate } from './sql/apply-releases';
import { timeOutDueCandidates } from './sql/claim-timeouts';
import { laneTasks, readyLanes, writeLanes, type LaneState } from './sql/lanes';
import { markClaimed } from './sql/mark-claimed';
import { mergeDueStaged, type ClaimState } from './sql/merge-staged';
import { preparationDue, probeAtBegin, type PreparationDue } from './sql/preparation-due';
import { nextWakeAt } from './sql/next-wake';
import { cacheProviders, loadResources, writeResources, type Resource } from './sql/resources';

/** MySQL: lanes whose tasks one round trip of the claim loop reads (claim-loop.ts). */
const LANES_READ_AHEAD = 8;

/**
 * claimSubmissions (DESIGN §2–§3, LANES.md): ONE short transaction per batch, serialised per
 * queue by the queue lock, so the start order is exact under any number of workers.
 *
 * 0. due deadline boosts fire (DESIGN §7, sql/apply-boosts.ts): raised tasks are staged again;
 * 1. due candidates past their deadline -> TIMED_OUT (no admission, no token);
 * 2. slots released since the last claim -> counters, lanes parked on them -> ready;
 * 3. lanes whose rate token is due -> ready;
 * 4. due staged tasks -> merged into their lanes' heads;
 * 5. loop: the ready lane with the smallest head key; re-read its head tasks (the stored head
 *    is a lower bound); the first limit without room parks the lane (once per blocking event:
 *    no refused candidate is read again by later claims until its resource frees); else its
 *    head is claimed, one unit of each of its limits is taken, and the lane is re-keyed;
 * 6. write lanes, counters and the claimed rows; with fairness V[p] advances to the claimed
 *    tags (sql/fair-tags.ts).
 * The claimed task is always the first admissible candidate: every lane with a better head
 * has just been shown to be blocked.
 * `first`: writes made in the same transaction before the claim (sql/complete-and-claim.ts).
 */
export async function claimSubmissions(c: StoreContext, req: ClaimRequest, first?: (x: Exec) => Promise<void>): Promise<SubmissionClaim> {
  return c.db.tx(
    async (x) => {
      if (first) await first(x); // completeAndClaim's completes, in this transaction before the claim
      const batchId = randomUUID();
      const now = await c.now(x);
      const todo = await preparationDue(x, c, now);
      // MariaDB: nothing to do, and the round trip that began the transaction committed it (probeAtBegin)
      if (x.ended) return { claimed: [], timedOut: [], nextWakeAt: laterOf(todo) };
      const boosted: BoostedTask[] = todo.boosts && c.d.policies.boost ? await applyDueBoosts(x, c, now) : [];
      const timedOut = todo.timeouts ? (await timeOutDueCandidates(x, c, now)).map((r) => rowToTask(r, c.fair)) : [];
      const resources = new Map<string, Resource>();
      const freed = todo.releases ? await takeReleases(x, c) : new Map<string, number>();
      if (freed.size > 0) {
        await loadResources(x, c, resources, freed.keys());
        for (const [k, n] of freed) {
          const r = resources.get(k)!;
          r.inUse = Math.max(0, r.inUse - n);
          r.dirty = true;
        }
      }
      if (todo.rate) await unparkDueRate(x, c, now);
      const lanes = new Map<string, LaneState>(); // the merge's changed lanes, then the claim's
      const merge: ClaimState = { lanes, resources, laterMark: todo.later?.mark, marksDue: todo.staged && todo.later !== undefined, marked: null };
      if (todo.staged || boosted.length > 0) await mergeDueStaged(x, c, now, merge);

      // no stored lane was ready at the probe and no step of this claim made one ready: the
      // first page is this claim's merged lanes alone (sql/preparation-due.ts `ready`)
      let stored = todo.ready || todo.releases || todo.rate;
      const claimed = await selectClaims(
        {
          async page(size, changed, cache, unwritten) {
            await writeLanes(x, c, changed); // the page must see the parkings of this claim
            const rows = stored ? await readyLanes(x, c, size) : [];
            stored = true;
            cacheProviders(cache, rows); // MySQL: joined to the page (sql/lanes.ts readyLanes)
            const keys = rows.flatMap((r) => admissionKeys(laneKeysOf(r)));
            for (const l of unwritten) keys.push(...admissionKeys(l.keys));
            await loadResources(x, c, cache, keys);
            return rows;
          },
          laneTasks: (wants) => laneTasks(x, c, wants),
          readAhead: c.d.kind === 'mysql' ? LANES_READ_AHEAD : 1,
        },
        req.limit,
        now,
        { aging: c.aging, fair: c.fair },
        lanes,
        resources,
      );
      // the claim's writes: nothing reads their answers, so on MariaDB they go with the COMMIT (db.ts writesLater)
      const w = writesLater(x);
      await writeLanes(w, c, lanes.values());
      await writeResources(w, c, resources.values(), true);
      const leaseUntil = now + req.leaseMs;
      await markClaimed(w, c, claimed.map((r) => Number(r.seq)), req.owner, batchId, leaseUntil, now, merge.unstage);
      if (c.fair) await advanceVirtualTimes(w, c, claimed.map((r) => ({ priority: num(r.priority), tag: BigInt(fairTagOf(r.k2)) })));
      const tasks: Task[] = claimed.map((r) => ({
        ...rowToTask(r, c.fair),
        status: TaskStatus.SUBMITTING,
        leaseOwner: req.owner,
        leaseId: `${batchId}:${String(r.id)}`,
        leaseUntil,
        version: Number(r.version) + 1,
        updatedAt: now,
      }));
      const wake = claimed.length < req.limit ? await claimWakeAt(x, c, todo, merge, boosted.length > 0) : null;
      timedOut.sort((a, b) => compareOrder(a, b, c.aging));
      const out: SubmissionClaim = { claimed: tasks, timedOut, nextWakeAt: wake };
      if (boosted.length > 0) out.boosted = boosted;
      return out;
    },
    { queueLock: true, ...probeAtBegin(c, first !== undefined) },
  );
}

/**
 * Claim step 7 (the batch not full): the earliest future time a claim could succeed without any
 * other change (sql/next-wake.ts). MySQL, without a round trip: the probe's earliest later mark
 * and rate token (they stand until the COMMIT: only claims spend marks and write lanes, under
 * the queue lock), the mark this claim's merge wrote (or found covered) and the rate tokens of
 * the lanes it parked (every lane it holds is in `lanes`). Work committed meanwhile by others
 * wakes the workers itself (in-process wake-ups, the change watcher), as it did when this was
 * read at the end of the claim. Read otherwise: PostgreSQL / SQLite, a merge that read nothing,
 * boosts fired (a raised task not due yet is marked again, sql/apply-boosts.ts).
 */
async function claimWakeAt(x: Exec, c: StoreContext, todo: PreparationDue, merge: ClaimState, boosted: boolean): Promise<number | null> {
  if (!todo.later || merge.marked === undefined || boosted) return nextWakeAt(x, c);
  const times = [todo.later.mark, todo.later.parked, merge.marked];
  for (const l of merge.lanes.values()) times.push(l.parkedUntil);
  const due = times.filter((v): v is number => v !== null && v !== undefined);
  return due.length ? Math.min(...due) : null;
}

/** The probe's earliest later mark or rate token (MySQL), null when none. */
function laterOf(todo: PreparationDue): number | null {
  const times = [todo.later?.mark ?? null, todo.later?.parked ?? null].filter((v): v is number => v !== null);
  return times.length ? Math.min(...times) : null;
}
