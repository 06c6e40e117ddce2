import { withPg } from '../lib/pg';
import { majorVersion, packageVersion } from '../lib/peers';
import type { BenchEnv, BenchJob, BenchTarget, Profile, RunningWorker, WorkerSpec } from '../target';

const SCHEMA = 'bench_pgboss';
/** Jobs fetched per poll by each polling loop in the tuned profile. */
const BATCH_SIZE = 100;
/** The smallest polling interval pg-boss accepts (10 and 12). */
const POLLING_INTERVAL_SECONDS = 0.5;
/** Pool of the tuned instance: the same as our DataSource's (pg-boss's default is 10). */
const POOL_MAX = 20;

type JobData = { i: number; p: number };

/** The part of pg-boss 10 and 12 that the bench uses (their APIs differ; see below). */
interface Boss {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  start(): Promise<unknown>;
  stop(options?: Record<string, unknown>): Promise<void>;
  createQueue(name: string, options?: Record<string, unknown>): Promise<void>;
  deleteQueue(name: string): Promise<void>;
  send(name: string, data: object, options?: Record<string, unknown>): Promise<unknown>;
  insert(...args: unknown[]): Promise<unknown>;
  work(name: string, options: Record<string, unknown>, handler: (jobs: Array<{ data: JobData }>) => Promise<void>): Promise<string>;
  offWork(name: string): Promise<void>;
}
type BossConstructor = new (options: Record<string, unknown>) => Boss;

/** pg-boss 10 exports the class as the module; 12 (ESM, loaded by require on Node 22+) as `PgBoss`. */
function loadPgBoss(): BossConstructor {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('pg-boss');
  return (mod.PgBoss ?? mod.default ?? mod) as BossConstructor;
}

/**
 * pg-boss on the same PostgreSQL as our TypeORM store: 10.x from the repo on Node 20, 12.x under
 * `--node=24` (lib/runtime.ts). pg-boss priorities are larger-first like ours.
 *
 * Concurrency C (the scenario's, in both profiles) is pg-boss's documented way to run C jobs at
 * once: v10 has no teamSize, so C `work()` calls (each call adds one polling worker,
 * pgboss.io/api/workers "work()"); v12 one `work()` with `localConcurrency: C` ("Number of
 * workers to spawn for this queue within the current Node.js process").
 *
 * Tuned (pgboss.io/api/workers, /api/constructor, /api/queues):
 * - `batchSize: 100` per worker, run one job at a time (so at most C handlers at once): "the
 *   number of jobs to fetch" per poll (default 1);
 * - `pollingIntervalSeconds: 0.5`, the minimum ("Must be >= 0.5"; default 2);
 * - v12: `burstWhenBatchFull: true` ("while each fetch returns a full batchSize batch ... keeps
 *   fetching continuously with no delay"), and the low-latency dispatch the docs describe under
 *   "Low-latency dispatch with LISTEN/NOTIFY": `useListenNotify: true` on the instance and
 *   `notify: true` on the queue (workers woken when a job is created);
 * - pool `max: 20` (default 10).
 * Defaults: `new PgBoss({ connectionString, schema })`, `createQueue(name)`, work() with
 * concurrency only: one job per fetch, a poll every 2 s, no LISTEN/NOTIFY, maintenance and
 * scheduling on.
 */
export function pgBossTarget(env: BenchEnv): BenchTarget {
  if (!env.postgres) throw new Error('pg-boss needs a PostgreSQL server');
  const pg = env.postgres;
  const PgBoss = loadPgBoss();
  const major = majorVersion('pg-boss');
  const v12 = major >= 11;
  /** The tuned instance, started in open(); a defaults namespace gets its own instance. */
  let tunedBoss: Boss | null = null;
  let boss: Boss | null = null;
  let attached = false;
  let profile: Profile = 'tuned';
  let name = '';

  const stopOptions = v12 ? { graceful: false } : { graceful: false, wait: true };
  const tunedOptions = (migrate: boolean) => ({ max: POOL_MAX, migrate, schedule: false, ...(v12 ? { useListenNotify: true } : {}) });
  const start = async (options: Record<string, unknown>): Promise<Boss> => {
    const b = new PgBoss({ connectionString: pg.url, schema: SCHEMA, ...options });
    b.on('error', () => undefined);
    await b.start();
    return b;
  };

  return {
    id: 'pg-boss',
    label: 'pg-boss',
    server: 'postgres',
    ours: false,
    version: packageVersion('pg-boss'),
    tuning: `${v12 ? 'work() with localConcurrency = concurrency' : 'work() x concurrency'}, batchSize ${BATCH_SIZE}, pollingIntervalSeconds ${POLLING_INTERVAL_SECONDS} (minimum)${
      v12 ? ', burstWhenBatchFull, useListenNotify + queue notify' : ''
    }, pool max ${POOL_MAX}, schedule off`,
    defaults: `new PgBoss({ connectionString, schema }), createQueue(name), ${v12 ? 'work() with localConcurrency = concurrency' : 'work() x concurrency'} (batchSize 1, polling 2 s${v12 ? ', no LISTEN/NOTIFY' : ''})`,
    async open(opts) {
      attached = !!opts?.attach;
      // the runner's own instance migrates the schema; attached ones (child processes, extra idle
      // workers) start an instance only for the profile they join
      if (!attached) tunedBoss = await start(tunedOptions(true));
    },
    async close() {
      await tunedBoss?.stop(stopOptions);
      tunedBoss = null;
    },
    async begin(namespace, opts) {
      name = namespace.replace(/[^A-Za-z0-9_-]/g, '_');
      profile = opts?.profile ?? 'tuned';
      if (profile === 'tuned') boss = tunedBoss ??= await start(tunedOptions(!attached));
      // every constructor option at its default but where the schema is (and no second migration
      // attempt from an instance that attaches)
      else boss = await start(attached ? { migrate: false } : {});
      if (!opts?.attach) await boss.createQueue(name, profile === 'tuned' && v12 ? { notify: true } : {});
    },
    async end(opts) {
      try {
        if (opts?.detach) return;
        if (!v12) {
          // v10: delete_queue drops the queue's partition but its foreign key refuses while rows exist
          await withPg(pg.url, async (c) => {
            const { rows } = await c.query(`SELECT partition_name FROM ${SCHEMA}.queue WHERE name = $1`, [name]);
            if (rows[0]) await c.query(`TRUNCATE ${SCHEMA}.${c.escapeIdentifier(rows[0].partition_name)}`);
          });
        }
        await boss!.deleteQueue(name); // v12 deletes the queue's jobs itself
      } finally {
        if (boss && boss !== tunedBoss) await boss.stop(stopOptions);
        boss = null;
      }
    },
    async submitOne(job) {
      await boss!.send(name, { i: job.i, p: job.priority }, { priority: job.priority });
    },
    async submitBulk(jobs) {
      const rows = jobs.map((j: BenchJob) => ({ data: { i: j.i, p: j.priority }, priority: j.priority }));
      if (v12) await boss!.insert(name, rows);
      else await boss!.insert(rows.map((r) => ({ name, ...r })));
    },
    async startWorker(spec: WorkerSpec): Promise<RunningWorker> {
      const handler = async (jobs: Array<{ data: JobData }>) => {
        // A batch may come back in no particular order (v10: UPDATE ... RETURNING); when order
        // matters we run it highest priority first, as a careful user would.
        const batch = spec.purpose === 'ordered' ? [...jobs].sort((a, b) => b.data.p - a.data.p || a.data.i - b.data.i) : jobs;
        for (const job of batch) await spec.handler({ i: job.data.i, priority: job.data.p });
      };
      const tuned =
        profile === 'tuned'
          ? { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS, ...(v12 ? { burstWhenBatchFull: true } : {}) }
          : {};
      if (v12) await boss!.work(name, { ...tuned, localConcurrency: spec.concurrency }, handler);
      else for (let w = 0; w < spec.concurrency; w++) await boss!.work(name, tuned, handler);
      const b = boss!;
      return { stop: () => b.offWork(name) };
    },
    async seedTerminal(count) {
      // the parent table routes rows to the queue's partition (v10) or table (v12)
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
