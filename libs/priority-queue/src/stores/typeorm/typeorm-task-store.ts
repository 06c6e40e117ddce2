// Above ~400 lines on purpose: the TaskStore port (some thirty methods), each a short call of
// its query (./sql) or claim path, plus init, schema checks and wake-ups; one file per group of
// port methods would hide which method does what.
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { LimitsSnapshot, LimitUpdate } from '../../core/admission';
import { ConfigurationError, StoreClosedError, ValidationError } from '../../core/errors';
import { checkIdempotentBatch, payloadFingerprint } from '../../core/idempotency';
import { Messages } from '../../core/messages';
import { isKey, validateHistoryLimit, validateOrderOptions, validateTaskQuery } from '../../core/validation';
import { refuseBoosts, refuseFairness, refuseWeights } from '../../core/policies';
import type { Fairness } from '../../core/fairness';
import { DEFAULT_HISTORY_LIMIT, type TaskHistoryEntry } from '../../core/history';
import type { TaskExplanation } from '../../core/explain';
import type { TaskPage, TaskQuery } from '../../core/task-query';
import { explainTaskSql } from './sql/explain-task';
import { queryTasks } from './sql/query-tasks';
import { requeue } from './sql/requeue';
import { taskHistory } from './sql/task-history';
import { newTaskRecord, TaskStatus, type Fence, type NewTask, type Task, type Transition } from '../../core/task';
import type {
  ClaimRequest,
  CompleteAndClaimResult,
  CompleteCall,
  CompletionOutcome,
  CreateResult,
  ListQuery,
  PollOutcome,
  QueueStats,
  RetryOutcome,
  StoreOptions,
  StorePolicies,
  SubmissionClaim,
  SubmittedOutcome,
  SweepRequest,
  TaskStore,
  WakeReason,
} from '../../core/task-store.port';
import { ChangeWatcher } from './change-watcher';
import type { LocalWakes } from '../../core/local-wakes';
import { localWakes } from './local-wakes';
import { addSweepRow, sweepExpired } from './sql/sweep-lease';
import { claimSubmissions } from './claim-submissions';
import { claimSubmissionsPg } from './claim-submissions.pg';
import { q, StoreContext } from './context';
import { Db } from './db';
import { dialectOf } from './dialects';
import { DEFAULT_QUEUE, DEFAULT_TABLE_PREFIX, isValidTablePrefix, MAX_QUEUE_LENGTH, notifyChannel, SUBMISSIONS_WAKE, tableNames, type TableNames } from './names';
import { assertDataSource } from './data-source-check';
import { storeEventTransport } from './event-transport';
import type { TaskEventTransport } from '../../core/event-transport.port';
import { PgDirect } from './pg-direct';
import { CompleteBatcher, completeOne } from './sql/complete-batch';
import { completeAndClaimSql } from './sql/complete-and-claim';
import { completeThenClaim } from '../../core/complete-and-claim';
import { completeRemoving, RemovingCompleter } from './sql/complete-removing';
import { PgWakeListener } from './pg-listener';
import { orderColumnsSql } from './order-columns';
import { num, rowToTask, TASK_COLUMNS } from './rows';
import { migrate, recordedSchemaVersion } from './schema/migrate';
import { LATEST_SCHEMA_VERSION } from './schema/migrations';
import { cancelTask } from './sql/cancel-task';
import { changePriority } from './sql/change-priority';
import { claimPolls } from './sql/claim-polls';
import { fencedWrite } from './sql/fenced-write';
import { createdOneShot, createsWithServerClock, insertTasks, oneShotCreate } from './sql/insert-tasks';
import { createPg, PgCreateBatcher } from './sql/create-batch.pg';
import { notifyArgs, readLimits, setLimits, setTenantWeight } from './sql/limits';
import { purge } from './sql/purge';
import { getTask, listTasks } from './sql/read-tasks';
import { recoverExpired } from './sql/recover-expired';
import { releaseClaim } from './sql/release-claim';
import { list, raw, sql } from './sql/sql';
import { markStaged } from './sql/stage-marks';
import { stats } from './sql/stats';
import { tuneSqlite } from './sqlite-tuning';
import { settledWithin, SHUTDOWN_WAIT_MS } from '../../core/timers';

export interface TypeOrmTaskStoreOptions extends StoreOptions {
  /** A DataSource you own (e.g. injected from @nestjs/typeorm); the store never closes it. */
  dataSource: DataSource;
  /** Prefix of every table of the store (default `pq_`). */
  tablePrefix?: string;
  /** Several queues may share the tables; each store serves one (default `default`). */
  queue?: string;
  /**
   * Run the store's migration in init() when `<prefix>schema_version` does not record it yet
   * (default true; a current schema is only read). Set false when your own migration run
   * includes priorityQueueMigrations(); init() then checks that the schema is at the version
   * this library needs (a ConfigurationError says what to run) and the queue settings.
   */
  migrate?: boolean;
  /**
   * Transitions each task keeps for history() (default 20, 0 = none): written into every task
   * this store creates (column `history_limit`) and kept by the task for its life,
   * whichever process later changes it.
   */
  historyLimit?: number;
  /**
   * MySQL / MariaDB and SQLite: while workers are subscribed, the store reads the queue's change
   * marks (one statement) this often to wake them for work made by other processes (ChangeWatcher):
   * the longest such a task waits for an idle worker. Writes through this process wake its
   * workers at once. Default 2000 ms (SQLite `:memory:`: 0); 0 = never (other processes' work
   * is then found by the workers' safety poll, idlePollMs).
   */
  wakePollMs?: number;
  /**
   * SQLite: when the database uses the default rollback journal, init() switches it to WAL
   * with synchronous = NORMAL (see sqlite-tuning.ts). Default true; false leaves it alone.
   */
  tuneSqlite?: boolean;
}

const LIVE = [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING];
const DEFAULT_WAKE_POLL_MS = 2000;
/**
 * The safety poll advised to idle workers when the change watcher runs: it reads durable state,
 * so it misses nothing a claim could find; the poll is only a backstop.
 */
const WATCHED_IDLE_POLL_MS = 120_000;

/**
 * TaskStore on TypeORM: PostgreSQL, MySQL / MariaDB (mysql2) and SQLite (better-sqlite3).
 * Plain SQL through the DataSource's connections (one file per hot query in ./sql); the schema
 * comes from real migrations (./schema), never `synchronize`.
 */
export class TypeOrmTaskStore implements TaskStore {
  readonly agingIntervalMs: number;
  /** DESIGN §7 fair share, fixed for the queue's life (recorded in `<prefix>queues` by init()). */
  readonly fairness: Fairness | null;
  /**
   * The DESIGN §7 policies on this store's dialect (dialects/*.dialect.ts `policies`); one it
   * lacks is refused with NotSupportedByStoreError.
   */
  readonly policies: StorePolicies;
  /** @internal The queue's table names (tablePrefix). */
  readonly tables: TableNames;
  readonly queue: string;
  private readonly ctx: StoreContext;
  private readonly schemaDb: Db;
  private readonly dataSource: DataSource;
  private readonly runMigrations: boolean;
  private readonly tuneSqlite: boolean;
  private listener: PgWakeListener | null = null;
  /** This process's wake-ups of the queue (shared with the other stores of the DataSource and queue). */
  private readonly wakes: LocalWakes;
  /** MySQL / MariaDB and SQLite: wake-ups from other processes (null when wakePollMs is 0). */
  private readonly watcher: ChangeWatcher | null;
  private readonly completer: CompleteBatcher | null;
  /** PostgreSQL: single creates gathered under a burst (sql/create-batch.pg.ts). */
  private readonly pgCreates: PgCreateBatcher | null;
  /** complete() with removal `now` on PostgreSQL, gathered per event-loop turn (sql/complete-removing.ts). */
  private readonly removing: RemovingCompleter | null;
  private closed = false;

  constructor(options: TypeOrmTaskStoreOptions) {
    assertDataSource(options?.dataSource, 'TypeOrmTaskStore({ dataSource })');
    const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
    if (!isValidTablePrefix(prefix)) throw new ValidationError(Messages.badTablePrefix(prefix));
    const queue = options.queue ?? DEFAULT_QUEUE;
    if (!isKey(queue, MAX_QUEUE_LENGTH)) throw new ValidationError(Messages.badQueue(queue));
    const order = validateOrderOptions(options);
    const dialect = dialectOf(options.dataSource);
    this.policies = { ...dialect.policies };
    refuseFairness('TypeOrmTaskStore', this.policies, order.fairness);
    this.agingIntervalMs = order.agingIntervalMs;
    this.fairness = order.fairness;
    this.queue = queue;
    this.dataSource = options.dataSource;
    this.runMigrations = options.migrate ?? true;
    this.tuneSqlite = options.tuneSqlite ?? true;
    this.tables = tableNames(prefix);
    const h = createHash('sha1').update(`${prefix}\u0000${queue}`).digest();
    const rowLock =
      dialect.kind === 'mysql'
        ? {
            // MariaDB: the clock also goes into @pq_now, for the claim's probe sent in the same round trip (sql/preparation-due.ts probeAtBegin)
            sql: `SELECT ${(options.dataSource.options as { type?: unknown }).type === 'mariadb' ? '@pq_now := ' : ''}CAST(ROUND(UNIX_TIMESTAMP(SYSDATE(3)) * 1000) AS SIGNED) AS now FROM ${this.tables.queues} WHERE queue = ? FOR UPDATE`,
            params: [queue],
          }
        : null;
    const db = new Db(options.dataSource, dialect, `pq:${h.toString('hex').slice(0, 40)}`, [h.readInt32BE(0), h.readInt32BE(4)], rowLock);
    const s = createHash('sha1').update(`${prefix}\u0000schema`).digest();
    this.schemaDb = new Db(options.dataSource, dialect, `pq:${s.toString('hex').slice(0, 40)}`, [s.readInt32BE(0), s.readInt32BE(4)]);
    const pg = dialect.kind === 'postgres' ? new PgDirect(options.dataSource) : null;
    this.ctx = new StoreContext(db, dialect, this.tables, queue, this.agingIntervalMs, options.clock ?? null, notifyChannel(prefix, h, 'wake'), pg);
    this.completer = dialect.kind === 'sqlite' ? null : new CompleteBatcher(this.ctx);
    this.pgCreates = pg ? new PgCreateBatcher(this.ctx) : null;
    this.removing = dialect.kind === 'postgres' ? new RemovingCompleter(this.ctx) : null;
    this.ctx.historyLimit = validateHistoryLimit(options.historyLimit, DEFAULT_HISTORY_LIMIT);
    this.ctx.fair = this.fairness !== null;
    this.wakes = localWakes(options.dataSource, this.ctx.channel);
    const memoryDb = dialect.kind === 'sqlite' && (options.dataSource.options as { database?: unknown }).database === ':memory:';
    const wakePollMs = options.wakePollMs ?? (memoryDb ? 0 : DEFAULT_WAKE_POLL_MS);
    if (!Number.isInteger(wakePollMs) || wakePollMs < 0) throw new ValidationError(Messages.invalidOption('wakePollMs', String(wakePollMs), 'an integer >= 0'));
    this.watcher = dialect.kind !== 'postgres' && wakePollMs > 0 ? new ChangeWatcher(this.ctx, wakePollMs) : null;
  }

  /**
   * The safety poll advised to idle workers (port): long where the change watcher runs (it
   * reads durable state) or where this process is the only one (SQLite `:memory:`).
   */
  get idlePollMs(): number | undefined {
    if (this.ctx.d.kind === 'postgres') return undefined;
    const memoryDb = (this.dataSource.options as { database?: unknown }).database === ':memory:';
    return this.watcher || memoryDb ? WATCHED_IDLE_POLL_MS : undefined;
  }

  /**
   * PostgreSQL and MySQL / MariaDB run calls side by side on the pool's connections (port): the
   * Worker's claim goes beside its completes rather than after them in completeAndClaim. SQLite,
   * or a pool of one connection, runs one call at a time: there the completes ride on the claim.
   */
  get parallelCalls(): boolean {
    if (this.ctx.d.kind === 'sqlite') return false;
    // TypeORM builds the pool from poolSize, then lets `extra` (the driver's own pool options:
    // pg's max, mysql2's connectionLimit) override it; both drivers default to 10 connections
    const o = this.dataSource.options as { poolSize?: number; extra?: { max?: number; connectionLimit?: number } };
    const fromExtra = this.ctx.d.kind === 'postgres' ? o.extra?.max : o.extra?.connectionLimit;
    return (fromExtra ?? o.poolSize ?? 10) > 1;
  }

  async init(): Promise<void> {
    this.open();
    if (!this.dataSource.isInitialized) throw new Error(Messages.dataSourceNotInitialized());
    if (this.tuneSqlite && this.ctx.d.kind === 'sqlite') await tuneSqlite(this.schemaDb);
    if (this.runMigrations) await migrate(this.schemaDb, this.tables);
    else await this.checkSchema();
    const c = this.ctx;
    const stored = await this.schemaDb.tx(async (x) => {
      const T = raw(c.t.queues);
      let [r] = await q(x, sql`SELECT aging_interval_ms, fairness FROM ${T} WHERE queue = ${c.queue}`);
      if (!r) {
        await x.rows(...args(sql`INSERT INTO ${T} (queue, aging_interval_ms, fairness) VALUES (${c.queue}, ${this.agingIntervalMs}, ${this.fairness})`));
        r = { aging_interval_ms: this.agingIntervalMs, fairness: this.fairness };
      }
      return { aging: num(r.aging_interval_ms), fairness: r.fairness === null || r.fairness === undefined ? null : String(r.fairness) };
    }, { queueLock: true });
    if (stored.aging !== this.agingIntervalMs) throw new ValidationError(Messages.agingMismatch(this.queue, stored.aging, this.agingIntervalMs));
    if (stored.fairness !== this.fairness) throw new ValidationError(Messages.fairnessMismatch(this.queue, stored.fairness, this.fairness));
    await addSweepRow(c);
  }

  /** migrate: false: the schema must be there (priorityQueueMigrations() run by the app), and new enough. */
  private async checkSchema(): Promise<void> {
    const found = await recordedSchemaVersion(this.schemaDb, this.tables);
    if (found < LATEST_SCHEMA_VERSION) throw new ConfigurationError(Messages.schemaMissing(this.tables.prefix, found, LATEST_SCHEMA_VERSION));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.stop();
    // completes and creates still out go on their own; a server that does not answer must not hold close()
    await settledWithin(Promise.all([this.completer?.drain(), this.pgCreates?.drain()]), SHUTDOWN_WAIT_MS);
    const l = this.listener;
    this.listener = null;
    await l?.close();
  }

  async now(): Promise<number> {
    this.open();
    return this.ctx.db.tx((x) => this.ctx.now(x));
  }

  async create(tasks: readonly NewTask[]): Promise<CreateResult[]> {
    this.open();
    if (tasks.length === 0) return [];
    refuseBoosts('TypeOrmTaskStore', this.policies, tasks);
    const c = this.ctx;
    if (c.pg && tasks.every((t) => t.idempotencyKey === null)) {
      // one statement, no explicit transaction (PostgreSQL, batch without idempotency keys);
      // single creates (submit) share statements under a burst (sql/create-batch.pg.ts)
      return tasks.length === 1 && this.pgCreates ? [await this.pgCreates.create(tasks[0])] : createPg(c, tasks);
    }
    const oneShot = c.db.batching && createsWithServerClock(c, tasks) && tasks.every((t) => t.idempotencyKey === null);
    for (let attempt = 1; ; attempt++) {
      try {
        // MariaDB, a small create without idempotency keys: ONE round trip (sql/insert-tasks.ts oneShotCreate)
        const sets = oneShot ? await c.db.oneShot(oneShotCreate(c, tasks).map((s) => ({ sql: s.text, params: s.params }))) : null;
        if (sets) {
          const { now, rows } = createdOneShot(sets[0]);
          const out = tasks.map((t): CreateResult => ({ task: clone({ ...newTaskRecord(t, now, rows.get(t.id)!.seq), fairTag: null }), created: true }));
          if (tasks.some((t) => t.delayMs <= 0)) this.wakes.notify();
          return out;
        }
        const out = await c.db.tx(async (x) => {
          // MariaDB: the INSERT may take the clock itself (sql/insert-tasks.ts createsWithServerClock)
          let now: number | null = createsWithServerClock(c, tasks) ? null : await c.now(x);
          const keys = [...new Set(tasks.map((t) => t.idempotencyKey).filter((k): k is string => k !== null))];
          const existing = new Map<string, Task>();
          if (keys.length > 0) {
            const rows = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND idempotency_key IN (${list(keys)})`);
            for (const r of rows) existing.set(String(r.idempotency_key), rowToTask(r, c.fair));
          }
          // all or none: a key reused with another type, tenant or payload fails the batch before any write
          checkIdempotentBatch(tasks, (k) => {
            const e = existing.get(k);
            return e && { id: e.id, type: e.type, tenantId: e.tenantId, payloadFingerprint: payloadFingerprint(e.payload) };
          });
          const fresh: NewTask[] = [];
          const firstOfKey = new Map<string, NewTask>();
          for (const t of tasks) {
            if (t.idempotencyKey === null) fresh.push(t);
            else if (!existing.has(t.idempotencyKey) && !firstOfKey.has(t.idempotencyKey)) {
              firstOfKey.set(t.idempotencyKey, t);
              fresh.push(t);
            }
          }
          const inserted = await insertTasks(x, c, now, fresh);
          now = inserted.now;
          if (fresh.length > 0) await markStaged(x, c, now! + Math.min(...fresh.map((t) => t.delayMs)));
          const made = new Map<NewTask, Task>(
            fresh.map((t) => {
              const { seq, fairTag } = inserted.rows.get(t.id)!;
              return [t, { ...newTaskRecord(t, now!, seq), fairTag }];
            }),
          );
          if (c.d.kind === 'postgres' && fresh.some((t) => t.delayMs <= 0)) await x.rows(...notifyArgs(c, SUBMISSIONS_WAKE));
          return tasks.map((t): CreateResult => {
            const own = made.get(t);
            if (own) return { task: clone(own), created: true };
            const k = t.idempotencyKey!;
            const prior = existing.get(k) ?? made.get(firstOfKey.get(k)!)!;
            return { task: clone(prior), created: false };
          });
          // MySQL: without fairness the create is one plain read and INSERTs, which lock alike at
          // every level (the duplicate-key check takes its gap lock under READ COMMITTED too), so
          // it keeps the session's level (one round trip less); fair tagging reads F rows FOR
          // UPDATE, which must not take gap locks (sql/fair-tags.ts).
        }, { readCommitted: c.fair });
        if (c.d.kind !== 'postgres' && out.some((r) => r.created && r.task.runAt <= r.task.createdAt)) this.wakes.notify();
        return out;
      } catch (e) {
        if (attempt >= 5 || !c.d.isUniqueViolation(e)) throw e;
      }
    }
  }




  get(id: string): Promise<Task | null> {
    this.open();
    return getTask(this.ctx, id);
  }

  list(query: ListQuery): Promise<Task[]> {
    this.open();
    return listTasks(this.ctx, query);
  }

  claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim> {
    this.open();
    return this.ctx.d.kind === 'postgres' ? claimSubmissionsPg(this.ctx, request) : claimSubmissions(this.ctx, request);
  }

  claimPolls(request: ClaimRequest): Promise<Task[]> {
    this.open();
    return claimPolls(this.ctx, request);
  }

  renewLease(fence: Fence, leaseMs: number): Promise<Task> {
    this.open();
    const now = this.ctx.nowSql();
    return fencedWrite(this.ctx, fence, { set: sql`lease_until = ${now} + ${leaseMs}`, from: LIVE, release: false, op: 'renewLease' });
  }

  markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task> {
    this.open();
    const now = this.ctx.nowSql();
    return fencedWrite(this.ctx, fence, {
      set: sql`status = ${outcome.status}, external_id = ${outcome.externalId}, next_poll_at = ${now} + ${outcome.pollDelayMs},
        lease_owner = NULL, lease_id = NULL, lease_until = NULL`,
      from: [TaskStatus.SUBMITTING],
      release: false,
      op: 'markSubmitted',
    });
  }

  recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task> {
    this.open();
    const now = this.ctx.nowSql();
    const error = outcome.error === undefined ? sql`` : sql`, error = ${outcome.error}`;
    return fencedWrite(this.ctx, fence, {
      set: sql`status = ${outcome.status}, next_poll_at = ${now} + ${outcome.nextPollDelayMs}, poll_errors = ${outcome.pollErrors},
        lease_owner = NULL, lease_id = NULL, lease_until = NULL${error}`,
      from: [TaskStatus.SUBMITTED, TaskStatus.RUNNING],
      release: false,
      op: 'recordPoll',
    });
  }

  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    this.open();
    if (outcome.remove) {
      if (outcome.remove.now && this.removing) return this.removing.complete(fence, outcome);
      return completeRemoving(this.ctx, fence, outcome, outcome.remove);
    }
    return this.completer ? this.completer.complete(fence, outcome) : completeOne(this.ctx, fence, outcome);
  }

  /**
   * The completes then the claim in one round trip (sql/complete-and-claim.ts); a batch with a
   * removal rule goes as the calls apart (core/complete-and-claim.ts), same answers.
   */
  completeAndClaim(completes: readonly CompleteCall[], request: ClaimRequest): Promise<CompleteAndClaimResult> {
    this.open();
    if (completes.some((k) => k.outcome.remove)) return completeThenClaim(this, completes, request);
    return completeAndClaimSql(this.ctx, completes, request);
  }

  retry(fence: Fence, outcome: RetryOutcome): Promise<Task> {
    this.open();
    const c = this.ctx;
    const k = orderColumnsSql(c, sql`${c.nowSql()} + ${outcome.delayMs}`);
    // Assignments read the row as it was (MySQL reads updated columns: k1, k2, status, finished_at come before the columns they read change).
    return fencedWrite(c, fence, {
      set: sql`k1 = CASE WHEN cancel_requested = 1 THEN k1 ELSE ${k.k1} END, k2 = CASE WHEN cancel_requested = 1 THEN k2 ELSE ${k.k2} END,
        finished_at = CASE WHEN cancel_requested = 1 THEN ${c.nowSql()} ELSE NULL END,
        status = CASE WHEN cancel_requested = 1 THEN 'CANCELED' ELSE 'PENDING_SUBMIT' END,
        attempts = attempts + 1,
        run_at = CASE WHEN cancel_requested = 1 THEN run_at ELSE ${c.nowSql()} + ${outcome.delayMs} END,
        staged = 1, error = ${outcome.error}, lease_owner = NULL, lease_id = NULL, lease_until = NULL`,
      from: [TaskStatus.SUBMITTING],
      release: true,
      op: 'retry',
      stages: true,
    });
  }

  async release(fence: Fence): Promise<Task> {
    this.open();
    const task = await releaseClaim(this.ctx, fence);
    this.wakes.notify();
    return task;
  }

  async recoverExpired(limit: number): Promise<Transition[]> {
    this.open();
    const { out, changed } = await recoverExpired(this.ctx, limit);
    if (changed) this.woke();
    return out;
  }

  /** Through the queue's sweep lease (table `<prefix>sweeps`, sql/sweep-lease.ts). */
  async sweepExpired(request: SweepRequest): Promise<Transition[] | null> {
    this.open();
    const r = await sweepExpired(this.ctx, request);
    if (!r) return null;
    if (r.changed) this.woke();
    return r.out;
  }

  async cancel(id: string): Promise<Task | null> {
    this.open();
    const task = await cancelTask(this.ctx, id);
    if (task?.cancelRequested) this.woke();
    return task;
  }

  changePriority(id: string, priority: number): Promise<Task> {
    this.open();
    return changePriority(this.ctx, id, priority);
  }

  stats(): Promise<QueueStats> {
    this.open();
    return stats(this.ctx);
  }

  getLimits(): Promise<LimitsSnapshot> {
    this.open();
    return this.ctx.db.tx((x) => readLimits(x, this.ctx));
  }

  async setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    this.open();
    refuseWeights('TypeOrmTaskStore', this.policies, update, this.fairness, this.queue);
    if (update.kind === 'tenantWeight') return setTenantWeight(this.ctx, update); // for later creates: no claim to wake
    const snapshot = await setLimits(this.ctx, update); // PostgreSQL: NOTIFY in its transaction
    if (this.ctx.d.kind !== 'postgres') this.wakes.notify();
    return snapshot;
  }

  purge(olderThan: number, limit: number): Promise<number> {
    this.open();
    return purge(this.ctx, olderThan, limit);
  }

  /** PostgreSQL: NOTIFY in its transaction; this process's workers are woken here. */
  async requeue(id: string): Promise<Transition> {
    this.open();
    const tr = await requeue(this.ctx, id);
    this.woke();
    return tr;
  }

  explain(id: string): Promise<TaskExplanation> {
    this.open();
    return explainTaskSql(this.ctx, id);
  }

  history(id: string): Promise<TaskHistoryEntry[]> {
    this.open();
    return taskHistory(this.ctx, id);
  }

  async query(query: TaskQuery): Promise<TaskPage> {
    this.open();
    return queryTasks(this.ctx, validateTaskQuery(query));
  }

  /**
   * @internal Task transitions of this queue between processes: LISTEN/NOTIFY on PostgreSQL; within this
   * process only on SQLite and MySQL / MariaDB (they have no notification channel).
   */
  createEventTransport(): TaskEventTransport {
    return storeEventTransport(this.dataSource, this.ctx.d.kind, this.tables.prefix, this.queue);
  }

  /** Transitions each task this store creates keeps; 0 = none. */
  get historyLimit(): number {
    return this.ctx.historyLimit;
  }

  /**
   * This process's writes wake at once (LocalWakes); other processes' through PostgreSQL
   * LISTEN/NOTIFY on a dedicated connection, or the change watcher on MySQL / MariaDB and SQLite.
   */
  async subscribe(listener: (what?: WakeReason) => void): Promise<() => Promise<void>> {
    this.open();
    const offLocal = this.wakes.add(() => listener());
    let offRemote: (() => Promise<void>) | null = null;
    try {
      if (this.ctx.d.kind === 'postgres') {
        if (!this.listener) this.listener = new PgWakeListener(this.dataSource, this.ctx.channel);
        offRemote = await this.listener.add((payload) => listener(payload === SUBMISSIONS_WAKE ? 'submissions' : undefined));
      } else if (this.watcher) {
        offRemote = await this.watcher.add(() => listener());
      }
    } catch (e) {
      offLocal();
      throw e;
    }
    return async () => {
      offLocal();
      await offRemote?.();
    };
  }

  /**
   * A write that may have made work claimable without a NOTIFY of its own: this process's
   * workers are woken here; PostgreSQL's other processes got the sweep's NOTIFY (recover-expired.ts).
   */
  private woke(): void {
    if (this.ctx.d.kind !== 'postgres') this.wakes.notify();
  }

  private open(): void {
    if (this.closed) throw new StoreClosedError();
  }
}

function args(s: ReturnType<typeof sql>): [string, unknown[]] {
  return [s.text, [...s.params]];
}

function clone(t: Task): Task {
  return { ...t, payload: t.payload === null ? null : JSON.parse(JSON.stringify(t.payload)) };
}
