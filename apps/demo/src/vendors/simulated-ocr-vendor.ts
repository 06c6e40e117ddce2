import type { VendorConfig, VendorName } from '../config/demo-config';
import { drawMs, sleep } from './draw';
import { SubmitRateMeter } from './submit-rate-meter';
import { VendorHttpError } from './vendor-http-error';
import type { OcrJobRequest, OcrJobStatus, VendorStats } from './vendor-api';

interface Job {
  id: string;
  account: string;
  idempotencyKey: string;
  pages: number;
  /** When the job finishes at the vendor (epoch ms). */
  finishAt: number;
  canceled: boolean;
}

/**
 * An in-process stand-in for an async OCR API. `submit` answers a job id after 20-80 ms,
 * `poll` says "running" until the job is done 100-500 ms later. Like a real gateway it
 * enforces its contract (submits per second, concurrent jobs per account) and answers 429
 * when a client exceeds it, counting that as a violation; on top of that it injects a share of
 * 503s and of spurious 429s. Submits carry an idempotency key: a retried submit returns the
 * job already created.
 */
export class SimulatedOcrVendor {
  private readonly jobs = new Map<string, Job>();
  private readonly jobByKey = new Map<string, string>();
  private readonly runningByAccount = new Map<string, Set<Job>>();
  private meter: SubmitRateMeter;
  private nextJob = 1;
  private counters = emptyCounters();
  private peakByAccount: Record<string, number> = {};

  constructor(
    readonly name: VendorName,
    readonly config: VendorConfig,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    this.meter = this.newMeter();
  }

  async submit(req: OcrJobRequest): Promise<{ jobId: string }> {
    const at = this.now();
    this.counters.submitRequests++;
    const latency = drawMs(this.config.submitLatencyMs, this.random);
    const answer = this.admit(req, at, latency);
    await sleep(latency);
    if (answer instanceof VendorHttpError) throw answer;
    return { jobId: answer };
  }

  async poll(jobId: string): Promise<OcrJobStatus> {
    this.counters.pollRequests++;
    const fail = this.random() < this.config.transientErrorShare;
    await sleep(drawMs(this.config.pollLatencyMs, this.random));
    if (fail) {
      this.counters.injected503++;
      throw new VendorHttpError(this.name, 503, 'Service Unavailable (simulated)');
    }
    const job = this.jobs.get(jobId);
    if (!job) throw new VendorHttpError(this.name, 404, `no job ${jobId}`);
    const now = this.now();
    if (job.canceled) return { jobId, state: 'canceled' };
    if (now < job.finishAt) {
      return { jobId, state: 'running', checkAgainInMs: Math.max(1, Math.min(this.config.pollHintMs, job.finishAt - now)) };
    }
    this.forget(job);
    return { jobId, state: 'done', pages: job.pages, text: `OCR text of ${job.pages} page(s), job ${jobId}` };
  }

  async cancel(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return;
    job.canceled = true;
    this.runningByAccount.get(job.account)?.delete(job);
    this.forget(job);
  }

  stats(): VendorStats {
    const now = this.now();
    const runningJobsByAccount: Record<string, number> = {};
    for (const account of this.runningByAccount.keys()) runningJobsByAccount[account] = this.running(account, now);
    return {
      name: this.name,
      contract: {
        submitsPerSecond: this.config.submitsPerSecond,
        maxConcurrentJobsPerAccount: this.config.maxConcurrentJobsPerAccount,
        jitterToleranceMs: this.config.jitterToleranceMs,
      },
      ...this.counters,
      peakSubmitsPerSecond: this.meter.peakPerWindow,
      peakConcurrentJobsByAccount: { ...this.peakByAccount },
      runningJobsByAccount,
    };
  }

  /** Starts counting afresh (the load script calls it before a run). Jobs are kept. */
  resetStats(): void {
    this.counters = emptyCounters();
    this.peakByAccount = {};
    this.meter = this.newMeter();
  }

  /** The gateway's decision on a submit arriving at `at`: a job id or the error to answer. */
  private admit(req: OcrJobRequest, at: number, latency: number): string | VendorHttpError {
    const { submitsPerSecond, maxConcurrentJobsPerAccount: perAccount } = this.config;
    if (this.meter.record(at) > submitsPerSecond) {
      this.counters.violations.rate++;
      return new VendorHttpError(this.name, 429, `Too Many Requests: more than ${submitsPerSecond} submits/s`, 1000 / submitsPerSecond);
    }
    const existing = this.jobByKey.get(req.idempotencyKey);
    if (existing) return existing;
    const running = this.running(req.account, at);
    if (perAccount !== null && running >= perAccount) {
      this.counters.violations.accountConcurrency++;
      return new VendorHttpError(this.name, 429, `Too Many Requests: account ${req.account} already runs ${running} jobs`, 250);
    }
    const r = this.random();
    if (r < this.config.tooManyRequestsShare) {
      this.counters.injected429++;
      return new VendorHttpError(this.name, 429, 'Too Many Requests (simulated)', 1000 / submitsPerSecond);
    }
    if (r < this.config.tooManyRequestsShare + this.config.transientErrorShare) {
      this.counters.injected503++;
      return new VendorHttpError(this.name, 503, 'Service Unavailable (simulated)');
    }
    return this.createJob(req, at + latency + drawMs(this.config.jobDurationMs, this.random), running + 1);
  }

  private createJob(req: OcrJobRequest, finishAt: number, runningAfter: number): string {
    const job: Job = {
      id: `${this.name}-job-${this.nextJob++}`,
      account: req.account,
      idempotencyKey: req.idempotencyKey,
      pages: req.pages,
      finishAt,
      canceled: false,
    };
    this.jobs.set(job.id, job);
    this.jobByKey.set(job.idempotencyKey, job.id);
    let set = this.runningByAccount.get(job.account);
    if (!set) this.runningByAccount.set(job.account, (set = new Set()));
    set.add(job);
    this.counters.accepted++;
    this.peakByAccount[job.account] = Math.max(this.peakByAccount[job.account] ?? 0, runningAfter);
    return job.id;
  }

  /** Jobs of the account still running at `now` (finished ones leave the set). */
  private running(account: string, now: number): number {
    const set = this.runningByAccount.get(account);
    if (!set) return 0;
    for (const job of set) if (job.finishAt <= now || job.canceled) set.delete(job);
    return set.size;
  }

  private forget(job: Job): void {
    this.jobs.delete(job.id);
    this.jobByKey.delete(job.idempotencyKey);
  }

  private newMeter(): SubmitRateMeter {
    return new SubmitRateMeter(1000 - this.config.jitterToleranceMs);
  }
}

function emptyCounters() {
  return {
    submitRequests: 0,
    accepted: 0,
    injected429: 0,
    injected503: 0,
    pollRequests: 0,
    violations: { rate: 0, accountConcurrency: 0 },
  };
}
