import type { BenchEnv, BenchJob, BenchTarget, Profile } from './target';
import { seededRandom, randomInt } from './lib/rng';
import { chunks, nowMs, type Countdown } from './lib/stats';

/** Sizes of one run; `--quick` shrinks them (see sizes.ts). */
export interface Sizes {
  submitOne: number;
  submitBulk: number;
  /** Jobs per bulk call, the same for every target. */
  bulkChunk: number;
  drain: number;
  concurrency: number;
  order: number;
  /** Pending levels of the backlog-scaling scenario. */
  backlogLevels: number[];
  /** Tasks claimed and finished at each level. */
  backlogClaims: number;
  /** Terminal rows written before the last backlog level (SQL targets); 0 = skip. */
  terminalRows: number;
  latencyTasks: number;
  latencyGapMs: number;
  admissionTasks: number;
  multiProcessTasks: number;
  processes: number;
  /** Longest a single measured phase may take before the target fails the scenario. */
  phaseTimeoutMs: number;
  /**
   * The same bound in the `defaults` profile, where a target that is not done by then is measured
   * over what it did (pg-boss's defaults fetch one job per worker every 2 s): see finishPhase.
   */
  defaultsPhaseMs: number;
  /** Idle scenario: how many idle workers (each with its own connections, like a process). */
  idleWorkers: number[];
  /** Idle scenario: the counted quiet window. */
  idleSeconds: number;
  /** Idle scenario: single tasks submitted one at a time after the window (wake-up latency). */
  idleWakeups: number;
}

export type Better = 'higher' | 'lower' | 'zero';

export interface Measurement {
  /** Stable id, e.g. `drain` or `backlog.100000`: the table row and the JSON key. */
  metric: string;
  /** Row label in the table. */
  label: string;
  value: number | null;
  unit: string;
  better: Better;
  /** Why the value is missing, or a remark. */
  note?: string;
}

export interface ScenarioContext {
  target: BenchTarget;
  env: BenchEnv;
  sizes: Sizes;
  seed: number;
  /** A namespace unique in this run (queue name / key prefix / table prefix). */
  namespace(suffix: string): string;
  log(message: string): void;
}

export interface Scenario {
  id: string;
  title: string;
  /** The profile its targets run in (default tuned); recorded with each result. */
  profile?: Profile;
  applies(target: BenchTarget): boolean;
  /** Rows this scenario reports (known before running, so a failure still shows its rows). */
  metrics(sizes: Sizes, target: BenchTarget): Array<Omit<Measurement, 'value'>>;
  run(ctx: ScenarioContext): Promise<Measurement[]>;
}

/** n jobs with priorities 0..9 drawn from the seed. */
export function makeJobs(n: number, seed: number, firstIndex = 0): BenchJob[] {
  const random = seededRandom(seed);
  const jobs: BenchJob[] = new Array(n);
  for (let k = 0; k < n; k++) jobs[k] = { i: firstIndex + k, priority: randomInt(random, 0, 9) };
  return jobs;
}

export async function submitAll(target: BenchTarget, jobs: readonly BenchJob[], chunkSize: number): Promise<void> {
  for (const chunk of chunks(jobs, chunkSize)) await target.submitBulk(chunk);
}

/** Runs `fn` inside a fresh namespace of the target and always cleans it up. */
export async function inNamespace<T>(ctx: ScenarioContext, suffix: string, fn: () => Promise<T>, profile: Profile = 'tuned'): Promise<T> {
  await ctx.target.begin(ctx.namespace(suffix), { profile });
  try {
    return await fn();
  } finally {
    await ctx.target.end().catch((e) => ctx.log(`cleanup failed: ${(e as Error).message}`));
  }
}

/** How long a measured phase may take in this profile. */
export function phaseLimit(sizes: Sizes, profile: Profile): number {
  return profile === 'defaults' ? sizes.defaultsPhaseMs : sizes.phaseTimeoutMs;
}

/**
 * Waits for a measured phase that started at `t0`. Tuned, a timeout fails the scenario; in the
 * defaults profile a target still going at the limit is measured over what it did by then, with
 * a note saying so (a failure, e.g. a worker process dying, still fails).
 */
export async function finishPhase(done: Countdown, profile: Profile, t0: number): Promise<{ elapsedMs: number; count: number; note?: string }> {
  try {
    await done.arm();
    return { elapsedMs: nowMs() - t0, count: done.count };
  } catch (e) {
    if (profile !== 'defaults' || !done.timedOut || done.count === 0) throw e;
    const elapsedMs = nowMs() - t0;
    return { elapsedMs, count: done.count, note: `not done at the ${Math.round(elapsedMs / 1000)} s limit: measured over the ${done.count} of ${done.target} that started` };
  }
}

/** Metric id and label of a scenario's row in the `defaults` profile, next to the tuned row. */
export function profiled(profile: Profile, metric: string, label: string): { metric: string; label: string } {
  if (profile === 'tuned') return { metric, label };
  const unit = label.lastIndexOf(' (');
  const named = unit > 0 ? `${label.slice(0, unit)}, defaults${label.slice(unit)}` : `${label}, defaults`;
  return { metric: `${metric}.defaults`, label: named };
}

export function compact(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${+(n / 1000).toFixed(1)}k`;
  return String(n);
}
