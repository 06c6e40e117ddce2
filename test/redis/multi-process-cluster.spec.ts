import { join } from 'node:path';
import { runMultiProcessAudit } from './support/multi-process-audit';
import { useRedisClusterWorkerEnv } from './support/redis-cluster-worker-env';
import { startWorkerProcess } from './support/worker-pool';

/**
 * The multi-process audit of multi-process.spec.ts on a 3-master Redis Cluster: three queues, one
 * per master (their hash tags placed with CLUSTER KEYSLOT + the slot map), 2,000 tasks each,
 * drained by 3 worker processes that each serve every queue through an ioredis Cluster client.
 * The same limits are set on every queue and hold per queue. (The 20,000-task scale is the
 * single-server spec's; this one costs about a quarter of its time, and may run beside it.)
 */
const WORKERS = 3;
const QUEUES = 3;

describe('Redis Cluster: 3 worker processes, 3 queues on 3 masters, 6,000 tasks, audit replay', () => {
  const env = useRedisClusterWorkerEnv('mpc', QUEUES);

  it('finishes every task exactly once within every limit of its queue and in order', async () => {
    expect(new Set(env.queues.map((q) => q.master.port)).size).toBe(QUEUES);
    const queues = env.stores.map((store, i) => ({ store, tasks: 2_000, paused: 100, seed: 20240601 + i }));
    await runMultiProcessAudit(queues, async (dir) => {
      env.workers.push(
        ...(await Promise.all(
          Array.from({ length: WORKERS }, (_, i) =>
            startWorkerProcess({
              cluster: [...env.cluster.nodes],
              prefix: 'mpc',
              queues: env.queues.map((q) => q.queue),
              auditPath: join(dir, `worker-${i}.log`),
              leaseMs: 20_000,
              concurrency: 16,
              handlerMs: 0,
            }),
          ),
        )),
      );
      return env.workers;
    });
  }, 240_000);
});
