import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { TaskEvent } from '../core/events';
import { TaskStatus, isTerminal } from '../core/task';
import { QueueSource } from './queue-source';

/** One bucket of the throughput chart. */
export interface ActivityBucket {
  /** Start of the bucket, epoch ms of this process' clock. */
  at: number;
  claims: number;
  finishes: number;
}

export interface WorkerSeen {
  owner: string;
  lastSeenAt: number;
}

export const BUCKET_MS = 5_000;
export const BUCKETS = 60; // 5 minutes
const WORKER_TTL_MS = BUCKETS * BUCKET_MS;
const MAX_WORKERS = 200;

/**
 * Claims (-> SUBMITTING) and finishes (-> a terminal status) per 5 s over the last 5 minutes,
 * and the lease owners that claimed, as seen by the events of THIS process: in a deployment
 * whose workers run elsewhere the chart is empty and says so.
 */
export class QueueActivity {
  private readonly claims = new Array<number>(BUCKETS).fill(0);
  private readonly finishes = new Array<number>(BUCKETS).fill(0);
  /** Index of the bucket that starts at `head`. */
  private headIndex = 0;
  private head: number;
  readonly workers = new Map<string, number>();

  constructor(start = Date.now()) {
    this.head = bucketStart(start);
  }

  record(e: TaskEvent, now: number): void {
    if (e.to === TaskStatus.SUBMITTING && e.from === TaskStatus.PENDING_SUBMIT) {
      this.claims[this.slot(now)]++;
      if (e.task.leaseOwner) this.seeWorker(e.task.leaseOwner, now);
    } else if (isTerminal(e.to) && e.from !== e.to) {
      this.finishes[this.slot(now)]++;
    }
  }

  series(now: number): ActivityBucket[] {
    this.advance(now);
    const out: ActivityBucket[] = [];
    for (let i = BUCKETS - 1; i >= 0; i--) {
      const idx = (this.headIndex - i + BUCKETS) % BUCKETS;
      out.push({ at: this.head - i * BUCKET_MS, claims: this.claims[idx], finishes: this.finishes[idx] });
    }
    return out;
  }

  recentWorkers(now: number): WorkerSeen[] {
    for (const [owner, at] of this.workers) if (now - at > WORKER_TTL_MS) this.workers.delete(owner);
    return [...this.workers].map(([owner, lastSeenAt]) => ({ owner, lastSeenAt }));
  }

  private seeWorker(owner: string, now: number): void {
    this.workers.delete(owner); // re-insert: the map stays in last-seen order
    this.workers.set(owner, now);
    if (this.workers.size > MAX_WORKERS) this.workers.delete(this.workers.keys().next().value as string);
  }

  private slot(now: number): number {
    this.advance(now);
    return this.headIndex;
  }

  /** Moves the ring forward to the bucket of `now`, zeroing the buckets skipped. */
  private advance(now: number): void {
    const start = bucketStart(now);
    const steps = Math.min(BUCKETS, Math.max(0, (start - this.head) / BUCKET_MS));
    for (let i = 0; i < steps; i++) {
      this.headIndex = (this.headIndex + 1) % BUCKETS;
      this.claims[this.headIndex] = 0;
      this.finishes[this.headIndex] = 0;
    }
    if (start > this.head) this.head = start;
  }
}

function bucketStart(t: number): number {
  return t - (t % BUCKET_MS);
}

@Injectable()
export class DashboardActivity implements OnModuleInit, OnModuleDestroy {
  private readonly byQueue = new Map<string, QueueActivity>();
  private offs: Array<() => void> = [];

  constructor(private readonly source: QueueSource) {}

  onModuleInit(): void {
    for (const q of this.source.all()) {
      const a = new QueueActivity();
      this.byQueue.set(q.name, a);
      this.offs.push(q.onEvent((e) => a.record(e, Date.now())));
    }
  }

  onModuleDestroy(): void {
    for (const off of this.offs) off();
    this.offs = [];
  }

  series(queue: string, now = Date.now()): ActivityBucket[] {
    return this.byQueue.get(queue)?.series(now) ?? [];
  }

  workers(queue: string, now = Date.now()): WorkerSeen[] {
    return this.byQueue.get(queue)?.recentWorkers(now) ?? [];
  }
}
