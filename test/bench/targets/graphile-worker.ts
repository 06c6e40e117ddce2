import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { withPg } from '../lib/pg';
import type { BenchEnv, BenchTarget, Profile, RunningWorker, WorkerSpec } from '../target';
import { packageVersion } from '../lib/machine';

const SCHEMA = 'bench_graphile';
const POLL_INTERVAL_MS = 500;
const silent = new Logger(() => () => undefined);

/**
 * graphile-worker (0.17 on Node 20, 0.18 under `--node=24`; the same API here) on the same
 * PostgreSQL as our TypeORM store. New jobs wake workers by LISTEN/NOTIFY. graphile-worker runs
 * the numerically SMALLER priority first, so our priority p becomes -p.
 *
 * Tuned, from its docs (worker.graphile.org/docs/performance, "Batching", and the option docs of
 * `preset.worker` in its index.d.ts):
 * - `concurrentJobs` (concurrency): the scenario's, in both profiles (default 1);
 * - `maxPoolSize`: "10 or concurrentJobs + 2, whichever is larger" (the option's doc);
 * - `localQueue.size` = concurrency + 1 in throughput scenarios: jobs fetched and locked in a
 *   batch, served locally ("a good starting point is often concurrentJobs + 1"; the performance
 *   page's own run used 500); off for order and latency, because "newly added high priority jobs
 *   will not be detected until the local queue is exhausted";
 * - `completeJobBatchDelay: 0` in throughput scenarios: completions batched ("even setting this to
 *   0 can be impactful");
 * - `pollInterval` 500 ms instead of 2,000: only future-dated jobs and retries wait for it (new
 *   jobs come by LISTEN/NOTIFY), so it changes nothing measured here but idle polling.
 * Defaults: run() with connectionString, schema, concurrency and the task list only.
 */
export function graphileWorkerTarget(env: BenchEnv): BenchTarget {
  if (!env.postgres) throw new Error('graphile-worker needs a PostgreSQL server');
  const pg = env.postgres;
  let utils: WorkerUtils | null = null;
  let identifier = '';
  let profile: Profile = 'tuned';

  const sql = (text: string, values: unknown[] = []): Promise<unknown> => withPg(pg.url, (c) => c.query(text, values));

  return {
    id: 'graphile-worker',
    label: 'graphile-worker',
    server: 'postgres',
    ours: false,
    version: packageVersion('graphile-worker'),
    tuning: `concurrency = scenario concurrency, pollInterval ${POLL_INTERVAL_MS} ms + LISTEN/NOTIFY, maxPoolSize concurrency+2; throughput scenarios: localQueue.size concurrency+1, completeJobBatchDelay 0`,
    defaults: 'run() with connectionString, schema, concurrency, taskList only (pollInterval 2 s + LISTEN/NOTIFY, maxPoolSize 10, no local queue, no batched completions)',
    async open(opts) {
      utils = await makeWorkerUtils({ connectionString: pg.url, schema: SCHEMA, logger: silent });
      if (!opts?.attach) await utils.migrate();
    },
    async close() {
      await utils?.release();
      utils = null;
    },
    async begin(namespace, opts) {
      identifier = namespace.replace(/[^A-Za-z0-9_]/g, '_');
      profile = opts?.profile ?? 'tuned';
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
      const common = {
        connectionString: pg.url,
        schema: SCHEMA,
        concurrency: spec.concurrency,
        noHandleSignals: true,
        logger: silent,
        taskList: {
          [identifier]: async (payload: unknown) => {
            const p = payload as { i: number; p: number };
            await spec.handler({ i: p.i, priority: p.p });
          },
        },
      };
      const runner: Runner = await run(
        profile === 'defaults'
          ? common
          : {
              ...common,
              pollInterval: POLL_INTERVAL_MS,
              maxPoolSize: Math.max(10, spec.concurrency + 2),
              preset: throughput ? { worker: { localQueue: { size: spec.concurrency + 1 }, completeJobBatchDelay: 0 } } : undefined,
            },
      );
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
