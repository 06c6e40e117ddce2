import { join } from 'node:path';
import { runMultiProcessAudit } from './support/multi-process-audit';
import { startWorkerProcess } from './support/worker-pool';
import { useRedisWorkerEnv } from './support/redis-worker-env';

/**
 * DESIGN §2–§4 across processes: 4 worker processes (core Worker + RedisTaskStore) drain 20,000
 * no-op tasks of one queue over rate-limited providers, accounts, tenants with small limits and
 * concurrency keys; the audit log is replayed (support/multi-process-audit.ts). The same audit
 * runs on a Redis Cluster in multi-process-cluster.spec.ts.
 */
const WORKERS = 4;

describe('Redis store: 4 worker processes, 20,000 tasks, audit replay', () => {
  const env = useRedisWorkerEnv('mp');

  it('finishes every task exactly once within every limit and in order', async () => {
    await runMultiProcessAudit([{ store: env.store, tasks: 20_000, paused: 300, seed: 20240601 }], async (dir) => {
      env.workers.push(
        ...(await Promise.all(
          Array.from({ length: WORKERS }, (_, i) =>
            startWorkerProcess({
              url: env.server.url,
              prefix: 'mp',
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
