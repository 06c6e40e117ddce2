/**
 * What every benchmark target (one of our stores, or a peer queue) implements, so that each
 * scenario drives all of them the same way.
 */

export type ServerKind = 'memory' | 'redis' | 'postgres' | 'mariadb' | 'sqlite';

/** Connection facts of the servers the runner started; serialisable (sent to child processes). */
export interface BenchEnv {
  redis?: { host: string; port: number; url: string };
  postgres?: SqlServerFacts;
  mariadb?: SqlServerFacts;
  /** Directory for SQLite files. */
  sqliteDir?: string;
}

export interface SqlServerFacts {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  url: string;
}

/** One job as every target receives it. priority: 0..9, larger = more urgent (mapped per peer). */
export interface BenchJob {
  i: number;
  priority: number;
  /** Admission keys, only in the admission scenario (ours only). */
  providerKey?: string;
  accountId?: string;
  tenantId?: string;
}

/** What a handler sees: the job's index and priority, plus our task when the target is ours. */
export interface StartedJob {
  i: number;
  priority: number;
  /** Store time of the claim (ours only: leaseUntil - leaseMs). */
  claimedAt?: number;
}

export type JobHandler = (job: StartedJob) => void | Promise<void>;

/**
 * `throughput`: the peer's settings recommended for throughput (batch fetch, local queues).
 * `ordered`: the settings a user who cares about start order and latency would pick (no
 * prefetch where prefetch would reorder). Our stores behave the same in both.
 */
export type WorkerPurpose = 'throughput' | 'ordered';

/**
 * `tuned`: each system with its documented throughput settings (the `tuning` text says which,
 * and where they are documented). `defaults`: what a user gets out of the box: only the
 * connection, the namespace (queue name / prefix / schema), the priority mapping and the
 * scenario's concurrency are set (concurrency is part of the workload: every system runs the
 * same number of handlers at once), every other setting is the library's default. A namespace
 * keeps one profile from begin() to end(), so producers and workers agree (BullMQ's job options,
 * pg-boss's queue options are set by the producer).
 */
export type Profile = 'tuned' | 'defaults';

export interface BeginOptions {
  /** A child process or an extra idle worker joins a namespace that the runner created. */
  attach?: boolean;
  /** Default `tuned`. */
  profile?: Profile;
}

export interface WorkerSpec {
  concurrency: number;
  purpose: WorkerPurpose;
  handler: JobHandler;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

export interface BenchTarget {
  readonly id: string;
  /** Column header in the table. */
  readonly label: string;
  readonly server: ServerKind;
  readonly ours: boolean;
  /** A variant of one of our targets (e.g. `+roc`), shown after `ours <server>` in headers. */
  readonly variant?: string;
  /** Package name and version, for the record. */
  readonly version: string;
  /** How the target was configured in the `tuned` profile (written into results and docs). */
  readonly tuning: string;
  /** What the `defaults` profile sets (everything else is the library's default). */
  readonly defaults: string;

  /** Connects; migrates unless attaching from a child process. */
  open(opts?: { attach?: boolean }): Promise<void>;
  close(): Promise<void>;

  /** Starts a fresh, empty namespace (queue name, key prefix, table prefix) for one scenario. */
  begin(namespace: string, opts?: BeginOptions): Promise<void>;
  /** Removes what the namespace left behind; `detach` (child processes) only lets go of it. */
  end(opts?: { detach?: boolean }): Promise<void>;

  submitOne(job: BenchJob): Promise<void>;
  submitBulk(jobs: readonly BenchJob[]): Promise<void>;
  startWorker(spec: WorkerSpec): Promise<RunningWorker>;

  /** SQL targets: writes `count` finished rows into the namespace (history that must not slow claims). */
  seedTerminal?(count: number): Promise<void>;
  /** Ours only: applies admission limits before the admission scenario. */
  applyLimits?(limits: AdmissionLimits): Promise<void>;
  /** Ours only: the lease used by workers, to derive claim times. */
  readonly leaseMs?: number;
}

export interface AdmissionLimits {
  providers: Array<{ providerKey: string; qps: number; burst: number | null; accountConcurrency: number }>;
  defaultTenantQuota: number;
}

export type TargetFactory = (env: BenchEnv) => BenchTarget;
