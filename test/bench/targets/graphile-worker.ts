import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { withPg } from '../lib/pg';
import type { BenchEnv, BenchTarget, RunningWorker, WorkerSpec } from '../target';
import { packageVersion } from '../lib/machine';

const SCHEMA = 'bench_graphile';
const POLL_INTERVAL_MS = 500;
const silent = new Logger(() => () => undefined);

/**
 * graphile-worker 0.17 on the same PostgreSQL as our TypeORM store. New jobs wake workers by
 * LISTEN/NOTIFY; pollInterval only matters for future jobs. For throughput we follow its
 * performance docs: pool = concurrency + 2, local queue (batch fetch) of concurrency + 1 jobs,
 * batched completions. For the order and latency scenarios the local queue is off, because it
 * hides newly added urgent jobs until it runs dry (the docs say so). graphile-worker runs the
 * numerically SMALLER priority first, so our priority p becomes -p.
 */
export function graphileWorkerTarget(env: BenchEnv): BenchTarget {
  if (!env.postgres) throw new Error('graphile-worker needs a PostgreSQL server');
  const pg = env.postgres;
  let utils: WorkerUtils | null = null;
  let identifier = '';

  const sql = (text: string, values: unknown[] = []): Promise<unknown> => withPg(pg.url, (c) => c.query(text, values));

  return {
    id: 'graphile-worker',
    label: 'graphile-worker',
    server: 'postgres',
    ours: false,
    version: packageVersion('graphile-worker'),
    tuning: `concurrency = scenario concurrency, pollInterval ${POLL_INTERVAL_MS} ms + LISTEN/NOTIFY, maxPoolSize concurrency+2; throughput scenarios: localQueue.size concurrency+1, completeJobBatchDelay 0`,
    async open(opts) {
      utils = await makeWorkerUtils({ connectionString: pg.url, schema: SCHEMA, logger: silent });
      if (!opts?.attach) await utils.migrate();
    },
    async close() {
      await utils?.release();
      utils = null;
    },
    async begin(namespace) {
      identifier = namespace.replace(/[^A-Za-z0-9_]/g, '_');
    },
    async end(opts) {
      if (opts?.detach) return;
      await sql(
        `DELETE FROM ${SCHEMA}._private_jobs WHERE task_id IN (SELECT id FROM ${SCHEMA}._private_tasks WHERE identifier = $1)`,
        [identifier],
      );
    },
    async submitOne(job) {
      await utils!.addJob(identifier, { i: job.i, p: job.priority }, { priority: -job.priority });
    },
    async submitBulk(jobs) {
      await utils!.addJobs(jobs.map((j) => ({ identifier, payload: { i: j.i, p: j.priority }, priority: -j.priority })));
    },
    async startWorker(spec: WorkerSpec): Promise<RunningWorker> {
      const throughput = spec.purpose === 'throughput';
      const runner: Runner = await run({
        connectionString: pg.url,
        schema: SCHEMA,
        concurrency: spec.concurrency,
        pollInterval: POLL_INTERVAL_MS,
        maxPoolSize: Math.max(10, spec.concurrency + 2),
        noHandleSignals: true,
        logger: silent,
        taskList: {
          [identifier]: async (payload) => {
            const p = payload as { i: number; p: number };
            await spec.handler({ i: p.i, priority: p.p });
          },
        },
        preset: throughput
          ? { worker: { localQueue: { size: spec.concurrency + 1 }, completeJobBatchDelay: 0 } }
          : undefined,
      });
      return { stop: () => runner.stop() };
    },
    async seedTerminal(count) {
      // graphile-worker deletes completed jobs; what stays are permanently failed ones
      // (attempts = max_attempts). Those are its terminal rows.
      await sql(`SELECT ${SCHEMA}.add_job($1, '{}'::json, max_attempts := 1, run_at := now() + interval '100 years')`, [identifier]);
      await sql(
        `INSERT INTO ${SCHEMA}._private_jobs (task_id, payload, priority, run_at, attempts, max_attempts, last_error)
         SELECT t.id, json_build_object('i', -g), 0, now() - interval '1 hour', 1, 1, 'failed'
         FROM generate_series(1, $2::int) g, ${SCHEMA}._private_tasks t WHERE t.identifier = $1`,
        [identifier, count],
      );
      await sql(`DELETE FROM ${SCHEMA}._private_jobs WHERE run_at > now() + interval '50 years'`);
      await sql(`ANALYZE ${SCHEMA}._private_jobs`);
    },
  };
}
