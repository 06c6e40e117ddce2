import { compareOrder } from '../../core/order-key';
import type { Row } from './db';
import { admissionKeys, consume, refusal } from './lane-admission';
import { orderOfRow } from './rows';
import { laneFromRow, type LaneState } from './sql/lanes';
import type { Resource } from './sql/resources';

/** How the selection loop reads the database (generic per-statement, or PostgreSQL batched). */
export interface ClaimSource {
  /**
   * The best `size` ready lanes (after writing the dirty lanes of `lanes`, so the page reflects
   * this claim's changes) and the resources their admission reads, loaded into `resources`.
   */
  page(size: number, lanes: Iterable<LaneState>, resources: Map<string, Resource>): Promise<Row[]>;
  /** The best `n` merged tasks of a lane, locked (see sql/lanes.ts laneTasks). */
  laneTasks(laneKey: string, n: number): Promise<Row[]>;
}

/**
 * Step 5 of the claim (see claim-submissions.ts): the lanes loop of LANES.md over pages of
 * ready lanes. Admission is per lane, so a lane is checked (and parked) on its stored head
 * without reading its tasks; its tasks are read only when it may really give the next claim.
 * Returns the claimed rows in claim order; `lanes` holds every lane changed.
 *
 * The loop ends only when it has `limit` tasks or no ready lane is left (DESIGN §3: no
 * head-of-line blocking, whatever the number of refused lanes ahead). A page that is used up
 * (every lane parked or emptied) while more ready lanes may follow is followed by the next one:
 * the parked lanes are written first, so the next read starts past them. Each lane parks at
 * most once per claim, so the work is bounded by `limit` plus the parkings; the page size
 * doubles (up to MAX_PAGE) while pages come back used up without giving `limit` tasks, so a
 * long run of refused lanes costs few round trips.
 */
export async function selectClaims(
  src: ClaimSource,
  limit: number,
  now: number,
  aging: number,
  lanes: Map<string, LaneState>,
  resources: Map<string, Resource>,
): Promise<Row[]> {
  const res = (k: string): Resource => resources.get(k)!;
  const cmp = (a: LaneState, b: LaneState) => compareOrder(a.head!, b.head!, aging);
  const claimed: Row[] = [];
  let pageSize = Math.max(32, limit * 2);
  while (claimed.length < limit) {
    const page = await src.page(pageSize, lanes.values(), resources);
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
    let needMore = false;
    while (claimed.length < limit && cands.length > 0) {
      const l = cands[0];
      if (boundary && compareOrder(l.head!, boundary, aging) > 0) {
        needMore = true;
        break;
      }
      for (const k of admissionKeys(l.keys)) if (!resources.has(k)) throw new Error(`resource ${k} not loaded`);
      const no = refusal(l.keys, res, now);
      if (no) {
        // every task of a lane has the same admission keys: park the lane, whatever its head
        l.parkedOn = no.parkOn;
        l.parkedUntil = no.until;
        l.dirty = true;
        cands.shift();
        continue;
      }
      if (!l.tasks) {
        const want = limit - claimed.length + 1;
        l.tasks = await src.laneTasks(l.laneKey, want);
        l.complete = l.tasks.length < want;
      }
      if (l.tasks.length === 0) {
        // every merged task of the lane left (claimed, canceled, re-prioritised, timed out)
        l.head = null;
        l.dirty = true;
        cands.shift();
        continue;
      }
      const actual = orderOfRow(l.tasks[0]);
      if (compareOrder(actual, l.head!, aging) !== 0) {
        l.head = actual; // the stored head was a lower bound: re-key and look again
        l.dirty = true;
        reinsert(cands, cmp);
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
    // a full page used up: the ready lanes after it are the next candidates
    if (full && cands.length === 0) needMore = true;
    if (!needMore) break;
    pageSize = Math.min(MAX_PAGE, pageSize * 2);
  }
  return claimed;
}

/** Largest page of ready lanes one read asks for (the rows and the resources they read). */
const MAX_PAGE = 1024;

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
