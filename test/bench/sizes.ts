import type { Sizes } from './scenario';

/** The sizes of issue 6. */
export const FULL: Sizes = {
  submitOne: 20_000,
  submitBulk: 20_000,
  bulkChunk: 1_000,
  drain: 20_000,
  concurrency: 16,
  order: 5_000,
  backlogLevels: [1_000, 10_000, 100_000],
  backlogClaims: 2_000,
  terminalRows: 1_000_000,
  latencyTasks: 2_000,
  latencyGapMs: 5,
  admissionTasks: 10_000,
  multiProcessTasks: 20_000,
  processes: 4,
  phaseTimeoutMs: 300_000,
  defaultsPhaseMs: 60_000,
  idleWorkers: [1, 8, 32],
  idleSeconds: 30,
  idleWakeups: 5,
};

/** `--quick`: the same scenarios, small enough for the whole run to take under 2 minutes. */
export const QUICK: Sizes = {
  submitOne: 500,
  submitBulk: 4_000,
  bulkChunk: 1_000,
  drain: 2_000,
  concurrency: 16,
  order: 400,
  backlogLevels: [1_000, 10_000],
  backlogClaims: 1_000,
  terminalRows: 0,
  latencyTasks: 100,
  latencyGapMs: 5,
  admissionTasks: 600,
  multiProcessTasks: 2_000,
  processes: 4,
  phaseTimeoutMs: 20_000,
  defaultsPhaseMs: 10_000,
  idleWorkers: [1, 8],
  idleSeconds: 5,
  idleWakeups: 3,
};
