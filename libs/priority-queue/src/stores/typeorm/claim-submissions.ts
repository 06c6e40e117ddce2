import { randomUUID } from 'node:crypto';
import { compareOrder } from '../../core/order-key';
import { TaskStatus, type Task } from '../../core/task';
import type { ClaimRequest, SubmissionClaim } from '../../core/task-store.port';
import type { StoreContext } from './context';
import type { Row } from './db';
import { admissionKeys, consume, refusal } from './lane-admission';
import { orderOfRow, rowToTask } from './rows';
import { takeReleases, unparkDueRate } from './sql/apply-releases';
import { timeOutDueCandidates } from './sql/claim-timeouts';
import { laneFromRow, laneTasks, readyLanes, writeLanes, type LaneState } from './sql/lanes';
import { markClaimed } from './sql/mark-claimed';
import { mergeDueStaged } from './sql/merge-staged';
import { nextWakeAt } from './sql/next-wake';
import { loadResources, writeResources, type Resource } from './sql/resources';

/**
 * claimSubmissions (DESIGN §2–§3, LANES.md): ONE short transaction per batch, serialised per
 * queue by the queue lock, so the start order is exact under any number of workers.
 *
 * 1. due candidates past their deadline -> TIMED_OUT (no admission, no token);
 * 2. slots released since the last claim -> counters, lanes parked on them -> ready;
 * 3. lanes whose rate token is due -> ready;
 * 4. due staged tasks -> merged into their lanes' heads;
 * 5. loop: the ready lane with the smallest head key; re-read its head tasks (the stored head
 *    is a lower bound); the first limit without room parks the lane (once per blocking event:
 *    no refused candidate is read again by later claims until its resource frees); else its
 *    head is claimed, one unit of each of its limits is taken, and the lane is re-keyed;
 * 6. write lanes, counters and the claimed rows.
 * The claimed task is always the first admissible candidate: every lane with a better head
 * has just been shown to be blocked.
 */
export async function claimSubmissions(c: StoreContext, req: ClaimRequest): Promise<SubmissionClaim> {
  return c.db.tx(
    async (x) => {
      const batchId = randomUUID();
      const now = await c.now(x);
      const timedOut = (await timeOutDueCandidates(x, c, now)).map(rowToTask);
      const resources = new Map<string, Resource>();
      const freed = await takeReleases(x, c);
      if (freed.size > 0) {
        await loadResources(x, c, resources, freed.keys());
        for (const [k, n] of freed) {
          const r = resources.get(k)!;
          r.inUse = Math.max(0, r.inUse - n);
          r.dirty = true;
        }
      }
      await unparkDueRate(x, c, now);
      await mergeDueStaged(x, c, now);

      const res = (k: string): Resource => resources.get(k)!;
      const cmp = (a: LaneState, b: LaneState) => compareOrder(a.head!, b.head!, c.aging);
      const lanes = new Map<string, LaneState>();
      const claimed: Row[] = [];
      const pageSize = Math.max(32, req.limit * 2);
      while (claimed.length < req.limit) {
        const page = await readyLanes(x, c, pageSize);
        if (page.length === 0) break;
        const full = page.length === pageSize;
        const cands: LaneState[] = page.map((r) => {
          const key = String(r.lane_key);
          let l = lanes.get(key);
          if (!l) lanes.set(key, (l = laneFromRow(r)));
          return l;
        });
        const boundary = full ? cands[cands.length - 1].head : null;
        cands.sort(cmp);
        await loadResources(x, c, resources, cands.flatMap((l) => admissionKeys(l.keys)));
        let needMore = false;
        while (claimed.length < req.limit && cands.length > 0) {
          const l = cands[0];
          if (boundary && compareOrder(l.head!, boundary, c.aging) > 0) {
            needMore = true;
            break;
          }
          if (!l.tasks) {
            const want = req.limit - claimed.length + 1;
            l.tasks = await laneTasks(x, c, l.laneKey, want);
            l.complete = l.tasks.length < want;
          }
          if (l.tasks.length === 0) {
            // Every merged task of the lane left (claimed, canceled, re-prioritised, timed out).
            l.head = null;
            l.dirty = true;
            cands.shift();
            continue;
          }
          const actual = orderOfRow(l.tasks[0]);
          if (compareOrder(actual, l.head!, c.aging) !== 0) {
            l.head = actual; // the stored head was a lower bound: re-key and look again
            l.dirty = true;
            reinsert(cands, cmp);
            continue;
          }
          const no = refusal(l.keys, res, now);
          if (no) {
            l.parkedOn = no.parkOn;
            l.parkedUntil = no.until;
            l.dirty = true;
            cands.shift();
            continue;
          }
          consume(l.keys, res, now);
          claimed.push(l.tasks.shift()!);
          l.dirty = true;
          if (l.tasks.length > 0) {
            l.head = orderOfRow(l.tasks[0]);
            reinsert(cands, cmp);
          } else if (l.complete) {
            l.head = null;
            cands.shift();
          } else {
            l.tasks = undefined; // read more next time; the claimed key stays a lower bound
            reinsert(cands, cmp);
          }
        }
        if (!needMore) break;
        await writeLanes(x, c, lanes.values()); // the next page must see this page's changes
      }
      await writeLanes(x, c, lanes.values());
      await writeResources(x, c, resources.values(), true);
      const leaseUntil = now + req.leaseMs;
      await markClaimed(x, c, claimed.map((r) => Number(r.seq)), req.owner, batchId, leaseUntil, now);
      const tasks: Task[] = claimed.map((r) => ({
        ...rowToTask(r),
        status: TaskStatus.SUBMITTING,
        leaseOwner: req.owner,
        leaseId: `${batchId}:${String(r.id)}`,
        leaseUntil,
        version: Number(r.version) + 1,
        updatedAt: now,
      }));
      const wake = claimed.length < req.limit ? await nextWakeAt(x, c) : null;
      timedOut.sort((a, b) => compareOrder(a, b, c.aging));
      return { claimed: tasks, timedOut, nextWakeAt: wake };
    },
    { queueLock: true },
  );
}

/** Moves cands[0] (whose key grew) to its place; the rest is sorted. */
function reinsert(cands: LaneState[], cmp: (a: LaneState, b: LaneState) => number): void {
  const l = cands.shift()!;
  let lo = 0;
  let hi = cands.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cmp(cands[mid], l) <= 0) lo = mid + 1;
    else hi = mid;
  }
  cands.splice(lo, 0, l);
}
