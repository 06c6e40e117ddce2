import { Inject, Injectable } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { drawMs } from '../vendors/draw';

interface ReindexJob {
  id: string;
  tenantId: string;
  finishAt: number;
}

/**
 * An in-process stand-in for a search cluster's async "rebuild the index of a tenant" API.
 * It records how many rebuilds of each tenant run at once: two at once would corrupt the
 * index, which is what the flow's concurrency key prevents.
 */
@Injectable()
export class SimulatedSearchIndexer {
  private readonly jobs = new Map<string, ReindexJob>();
  private readonly runningByTenant = new Map<string, number>();
  private readonly peakByTenant = new Map<string, number>();
  private peakOverall = 0;
  private running = 0;
  private nextJob = 1;

  constructor(@Inject(DEMO_CONFIG) private readonly config: DemoConfig) {}

  startReindex(tenantId: string): string {
    const job: ReindexJob = {
      id: `reindex-${this.nextJob++}`,
      tenantId,
      finishAt: Date.now() + drawMs(this.config.search.reindexDurationMs, Math.random),
    };
    this.jobs.set(job.id, job);
    const n = (this.runningByTenant.get(tenantId) ?? 0) + 1;
    this.runningByTenant.set(tenantId, n);
    this.peakByTenant.set(tenantId, Math.max(this.peakByTenant.get(tenantId) ?? 0, n));
    this.running++;
    this.peakOverall = Math.max(this.peakOverall, this.running);
    return job.id;
  }

  /** null = unknown job; otherwise ms left (0 = done, the job is then forgotten). */
  remainingMs(jobId: string): number | null {
    const job = this.jobs.get(jobId);
    if (!job) return null;
    const left = Math.max(0, job.finishAt - Date.now());
    if (left === 0) this.finish(job);
    return left;
  }

  stop(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (job) this.finish(job);
  }

  /** Most rebuilds of one tenant seen at once (must stay 1), and of all tenants together. */
  peaks(): { byTenant: Record<string, number>; overall: number } {
    return { byTenant: Object.fromEntries(this.peakByTenant), overall: this.peakOverall };
  }

  private finish(job: ReindexJob): void {
    this.jobs.delete(job.id);
    this.runningByTenant.set(job.tenantId, (this.runningByTenant.get(job.tenantId) ?? 1) - 1);
    this.running--;
  }
}
