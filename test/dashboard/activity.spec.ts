import { TaskStatus, type Task, type TaskEvent } from 'nestjs-priority-queue';
import { BUCKETS, BUCKET_MS, QueueActivity } from '../../libs/priority-queue/src/dashboard/activity';

const T = 1_700_000_000_000; // a multiple of BUCKET_MS

function event(from: TaskStatus | null, to: TaskStatus, leaseOwner: string | null = null): TaskEvent {
  const task = { id: 't', type: 'x', status: to, leaseOwner } as Task;
  return { taskId: 't', type: 'x', from, to, task, at: 0 };
}
const claim = (owner = 'w') => event(TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, owner);

describe('dashboard throughput (QueueActivity)', () => {
  it('counts claims and finishes per bucket over the last minutes, and zeroes the buckets it skips', () => {
    const a = new QueueActivity(T);
    a.record(claim(), T + 100);
    a.record(claim(), T + 4_999);
    a.record(event(TaskStatus.SUBMITTING, TaskStatus.FAILED), T + 5_000);
    a.record(event(TaskStatus.RUNNING, TaskStatus.SUCCEEDED), T + 9_000);
    a.record(event(TaskStatus.SUBMITTING, TaskStatus.PENDING_SUBMIT), T + 9_000); // a retry is neither
    a.record(event(null, TaskStatus.PENDING_SUBMIT), T + 9_000); // nor a creation
    a.record(claim(), T + 60_000);
    const s = a.series(T + 60_001);
    expect(s).toHaveLength(BUCKETS);
    expect(s[s.length - 1]).toEqual({ at: T + 60_000, claims: 1, finishes: 0 });
    const at = (t: number) => s.find((b) => b.at === t);
    expect(at(T)).toEqual({ at: T, claims: 2, finishes: 0 });
    expect(at(T + BUCKET_MS)).toEqual({ at: T + BUCKET_MS, claims: 0, finishes: 2 });
    expect(s.reduce((n, b) => n + b.claims + b.finishes, 0)).toBe(5);
    expect(s.map((b) => b.at)).toEqual(Array.from({ length: BUCKETS }, (_, i) => T + 60_000 - (BUCKETS - 1 - i) * BUCKET_MS));
  });

  it('forgets everything older than its window, also after a long silence, and around the ring many times', () => {
    const a = new QueueActivity(T);
    let n = 0;
    // 3 hours of one claim per 7 s: every bucket written many times over
    for (let t = T; t < T + 3 * 3600_000; t += 7_000) {
      a.record(claim(), t);
      n++;
    }
    const end = T + 3 * 3600_000;
    const s = a.series(end);
    const inWindow = Array.from({ length: n }, (_, i) => T + i * 7_000).filter((t) => t >= s[0].at).length;
    expect(s.reduce((k, b) => k + b.claims, 0)).toBe(inWindow);
    expect(a.series(end + BUCKETS * BUCKET_MS).every((b) => b.claims === 0 && b.finishes === 0)).toBe(true);
    expect(a.series(end + 24 * 3600_000)).toHaveLength(BUCKETS);
  });

  it('remembers the workers seen claiming for the window, at most 200, the latest kept', () => {
    const a = new QueueActivity(T);
    for (let i = 0; i < 250; i++) a.record(claim(`w-${i}`), T + i);
    a.record(claim('w-0'), T + 1_000); // seen again: the newest
    const seen = a.recentWorkers(T + 2_000);
    expect(seen).toHaveLength(200);
    expect(seen.map((w) => w.owner)).toContain('w-0');
    expect(seen.map((w) => w.owner)).not.toContain('w-50');
    expect(a.recentWorkers(T + 1_000 + BUCKETS * BUCKET_MS + 1)).toEqual([]);
  });
});
