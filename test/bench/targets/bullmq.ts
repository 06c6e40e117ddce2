import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { BenchEnv, BenchJob, BenchTarget, Profile, RunningWorker, WorkerSpec } from '../target';
import { packageVersion } from '../lib/machine';

/**
 * BullMQ 6 on the same Redis as our Redis store. BullMQ priorities run from 1 (most urgent)
 * upwards, so our priority p (0..9, larger first) becomes 10 - p.
 *
 * Tuned, as its docs recommend for throughput:
 * - Worker `concurrency` (docs.bullmq.io/guide/workers/concurrency: jobs one worker runs in
 *   parallel; default 1, here the scenario's concurrency in both profiles);
 * - `addBulk` for bulk submits (docs.bullmq.io/guide/queues/adding-bulks: one round trip, atomic);
 * - `removeOnComplete: true, removeOnFail: true` as the queue's default job options
 *   (docs.bullmq.io/guide/queues/auto-removal-of-jobs: finished jobs are otherwise kept forever
 *   in the completed/failed sets; "production-grade" setups limit them), so Redis holds only
 *   live jobs.
 * Defaults: the same Queue and Worker with only connection, prefix and concurrency: finished jobs
 * stay in the completed set, drainDelay 5 s, stalledInterval 30 s, lockDuration 30 s.
 */
export function bullmqTarget(env: BenchEnv): BenchTarget {
  if (!env.redis) throw new Error('bullmq needs a Redis server');
  const connection: ConnectionOptions = { host: env.redis.host, port: env.redis.port, maxRetriesPerRequest: null };
  const prefix = 'bench-bullmq';
  let queue: Queue | null = null;
  let name = '';

  const jobOptions = (j: BenchJob) => ({ priority: 10 - j.priority });

  return {
    id: 'bullmq',
    label: 'BullMQ',
    server: 'redis',
    ours: false,
    version: packageVersion('bullmq'),
    tuning: 'Worker concurrency = scenario concurrency, addBulk, removeOnComplete/removeOnFail: true, priority 10-p',
    defaults: 'Queue and Worker with connection, prefix and concurrency only (completed jobs kept), addBulk, priority 10-p',
    async open() {},
    async close() {},
    async begin(namespace, opts) {
      name = namespace;
      const profile: Profile = opts?.profile ?? 'tuned';
      queue = new Queue(name, {
        connection,
        prefix,
        ...(profile === 'tuned' ? { defaultJobOptions: { removeOnComplete: true, removeOnFail: true } } : {}),
      });
      await queue.waitUntilReady();
    },
    async end(opts) {
      if (!queue) return;
      try {
        if (!opts?.detach) await queue.obliterate({ force: true });
      } finally {
        await queue.close();
        queue = null;
      }
    },
    async submitOne(job) {
      await queue!.add('bench', { i: job.i, p: job.priority }, jobOptions(job));
    },
    async submitBulk(jobs) {
      await queue!.addBulk(jobs.map((j) => ({ name: 'bench', data: { i: j.i, p: j.priority }, opts: jobOptions(j) })));
    },
    async startWorker(spec: WorkerSpec): Promise<RunningWorker> {
      const worker = new Worker(
        name,
        async (job) => {
          await spec.handler({ i: job.data.i, priority: job.data.p });
        },
        { connection, prefix, concurrency: spec.concurrency },
      );
      worker.on('error', () => undefined);
      return {
        stop: () => worker.close(),
      };
    },
  };
}
