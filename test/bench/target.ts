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
  /** Package name and version, for the record. */
  readonly version: string;
  /** How the target was configured (written into results and docs). */
  readonly tuning: string;

  /** Connects; migrates unless attaching from a child process. */
  open(opts?: { attach?: boolean }): Promise<void>;
  close(): Promise<void>;

  /** Starts a fresh, empty namespace (queue name, key prefix, table prefix) for one scenario. */
  begin(namespace: string, opts?: { attach?: boolean }): Promise<void>;
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
