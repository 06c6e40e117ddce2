import { join } from 'node:path';
import { runMultiProcessAudit } from './support/multi-process-audit';
import { startWorkerProcess } from './support/worker-pool';
import { useRedisWorkerEnv } from './support/redis-worker-env';

/**
 * DESIGN §7 fair share across processes: the audit of multi-process.spec.ts (every task once, no
 * limit exceeded, order kept, no head-of-line blocking) on a queue with fairness: 'tenant' and
 * tenant weights, drained by 3 worker processes. The tag state lives in the queue's keys and
 * moves inside the create / claim scripts, so the order every process claims in is the fair one
 * (the replay compares fair tags).
 */
const WORKERS = 3;

describe('Redis store with fair share: 3 worker processes, 6,000 tasks, audit replay', () => {
  const env = useRedisWorkerEnv('mpfair', undefined, { fairness: 'tenant' });

  it('finishes every task exactly once within every limit and in the fair order', async () => {
    await runMultiProcessAudit([{ store: env.store, tasks: 6_000, paused: 100, seed: 20261130, weights: { t3: 3, t4: 2 } }], async (dir) => {
      env.workers.push(
        ...(await Promise.all(
          Array.from({ length: WORKERS }, (_, i) =>
            startWorkerProcess({
              url: env.server.url,
              prefix: 'mpfair',
              fairness: 'tenant',
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
