import PgBoss from 'pg-boss';
import { withPg } from '../lib/pg';
import type { BenchEnv, BenchJob, BenchTarget, RunningWorker, WorkerSpec } from '../target';
import { packageVersion } from '../lib/machine';

const SCHEMA = 'bench_pgboss';
/** Jobs fetched per poll: pg-boss 10's throughput knob (teamSize is gone in v10). */
const BATCH_SIZE = 100;
/** The smallest polling interval pg-boss 10 accepts. */
const POLLING_INTERVAL_SECONDS = 0.5;

/**
 * pg-boss 10 on the same PostgreSQL as our TypeORM store. v10 dropped teamSize/teamConcurrency:
 * each `work()` call adds one polling loop, and `batchSize` fetches many jobs per poll. We map
 * concurrency C to C `work()` loops, each fetching up to 100 jobs per poll and running them one at
 * a time (so at most C handlers run at once), polling every 0.5 s (the minimum). pg-boss
 * priorities are larger-first like ours.
 */
export function pgBossTarget(env: BenchEnv): BenchTarget {
  if (!env.postgres) throw new Error('pg-boss needs a PostgreSQL server');
  const pg = env.postgres;
  let boss: PgBoss | null = null;
  let name = '';

  return {
    id: 'pg-boss',
    label: 'pg-boss',
    server: 'postgres',
    ours: false,
    version: packageVersion('pg-boss'),
    tuning: `work() x concurrency, batchSize ${BATCH_SIZE}, pollingIntervalSeconds ${POLLING_INTERVAL_SECONDS} (minimum), pool max 20`,
    async open(opts) {
      boss = new PgBoss({
        connectionString: pg.url,
        schema: SCHEMA,
        max: 20,
        migrate: !opts?.attach,
        schedule: false,
      });
      boss.on('error', () => undefined);
      await boss.start();
    },
    async close() {
      await boss?.stop({ graceful: false, wait: true });
      boss = null;
    },
    async begin(namespace, opts) {
      name = namespace.replace(/[^A-Za-z0-9_-]/g, '_');
      if (!opts?.attach) await boss!.createQueue(name);
    },
    async end(opts) {
      if (opts?.detach) return;
      // delete_queue drops the queue's partition but its foreign key refuses while rows exist
      await withPg(pg.url, async (c) => {
        const { rows } = await c.query(`SELECT partition_name FROM ${SCHEMA}.queue WHERE name = $1`, [name]);
        if (rows[0]) await c.query(`TRUNCATE ${SCHEMA}.${c.escapeIdentifier(rows[0].partition_name)}`);
      });
      await boss!.deleteQueue(name);
    },
    async submitOne(job) {
      await boss!.send(name, { i: job.i, p: job.priority }, { priority: job.priority });
    },
    async submitBulk(jobs) {
      await boss!.insert(jobs.map((j: BenchJob) => ({ name, data: { i: j.i, p: j.priority }, priority: j.priority })));
    },
    async startWorker(spec: WorkerSpec): Promise<RunningWorker> {
      for (let w = 0; w < spec.concurrency; w++) {
        await boss!.work<{ i: number; p: number }>(
          name,
          { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
          async (jobs) => {
            // A batch comes back in no particular order (UPDATE ... RETURNING); when order
            // matters we run it highest priority first, as a careful user would.
            const batch = spec.purpose === 'ordered' ? [...jobs].sort((a, b) => b.data.p - a.data.p || a.data.i - b.data.i) : jobs;
            for (const job of batch) await spec.handler({ i: job.data.i, priority: job.data.p });
          },
        );
      }
      return {
        stop: async () => {
          await boss!.offWork(name);
        },
      };
    },
    async seedTerminal(count) {
      await withPg(pg.url, async (client) => {
        await client.query(
          `INSERT INTO ${SCHEMA}.job (name, data, state, priority, started_on, completed_on, created_on)
           SELECT $1, jsonb_build_object('i', -g), 'completed', g % 10, now(), now(), now() - interval '1 hour'
           FROM generate_series(1, $2::int) g`,
          [name, count],
        );
        await client.query(`ANALYZE ${SCHEMA}.job`);
      });
    },
  };
}
