import { Body, Controller, Get, HttpCode, HttpStatus, NotFoundException, Param, Patch, Post, Put, UseGuards } from '@nestjs/common';
import { AdmissionGuard, InjectAdmissionGuard } from 'nestjs-priority-queue';
import { NightlyArchiveJob } from '../archive/nightly-archive.job';
import type { VendorName } from '../config/demo-config';
import { OCR_QUEUE } from '../queues/demo-queues';
import { QueueDirectory } from '../queues/queue-directory';
import { SimulatedSearchIndexer } from '../search/simulated-search-indexer';
import { AdminKeyGuard } from '../tenancy/admin-key.guard';
import { TenantDirectory } from '../tenancy/tenant-directory';
import { TaskTimeline } from '../timeline/task-timeline';
import { VendorDirectory } from '../vendors/vendor-directory';
import { RunArchiveDto } from './dto/run-archive.dto';
import { TenantQuotaDto } from './dto/tenant-quota.dto';
import { TenantWeightDto } from './dto/tenant-weight.dto';
import { VendorLimitsDto } from './dto/vendor-limits.dto';
import { queueView } from './queue-views';
import { VendorNamePipe } from './vendor-name.pipe';

/**
 * Operator routes (x-admin-key): the whole queue's stats, pause / resume a vendor, change limits at runtime (they live
 * in the store, so every worker process obeys at its next claim), run the archive now, and
 * read what the simulated vendors saw.
 */
@Controller('admin')
@UseGuards(AdminKeyGuard)
export class AdminController {
  constructor(
    @InjectAdmissionGuard(OCR_QUEUE) private readonly guard: AdmissionGuard,
    private readonly queues: QueueDirectory,
    private readonly vendors: VendorDirectory,
    private readonly indexer: SimulatedSearchIndexer,
    private readonly tenants: TenantDirectory,
    private readonly timeline: TaskTimeline,
    private readonly archive: NightlyArchiveJob,
  ) {}

  /** Pending and oldest wait per priority, in flight per vendor, account, tenant and key; paused vendors. */
  @Get('queue/stats')
  async queueStats() {
    const [s, limits] = await Promise.all([this.queues.stats(), this.guard.getLimits()]);
    return queueView(s, limits);
  }

  @Post('vendors/:vendor/pause')
  @HttpCode(HttpStatus.OK)
  pause(@Param('vendor', VendorNamePipe) vendor: VendorName) {
    return this.guard.pause(vendor);
  }

  @Post('vendors/:vendor/resume')
  @HttpCode(HttpStatus.OK)
  resume(@Param('vendor', VendorNamePipe) vendor: VendorName) {
    return this.guard.resume(vendor);
  }

  @Patch('vendors/:vendor/limits')
  setVendorLimits(@Param('vendor', VendorNamePipe) vendor: VendorName, @Body() body: VendorLimitsDto) {
    return this.guard.setLimits({ kind: 'provider', providerKey: vendor, ...definedOnly(body) });
  }

  @Put('tenants/:id/quota')
  setTenantQuota(@Param('id') id: string, @Body() body: TenantQuotaDto) {
    if (!this.tenants.get(id)) throw new NotFoundException(`unknown tenant "${id}"`);
    return this.guard.setTenantQuota(id, body.quota);
  }

  /**
   * A tenant's fair-share weight on the `ocr` queue, for its tasks created from now on (start-up
   * sets each tenant's plan weight: fairness/tenant-weights.initializer.ts). Refused with the
   * library's message when the queue runs without fair share (409 on a store without it).
   */
  @Put('tenants/:id/weight')
  setTenantWeight(@Param('id') id: string, @Body() body: TenantWeightDto) {
    if (!this.tenants.get(id)) throw new NotFoundException(`unknown tenant "${id}"`);
    return this.guard.setTenantWeight(id, body.weight);
  }

  @Get('limits')
  limits() {
    return this.guard.getLimits();
  }

  /** What each simulated vendor saw: peaks, contract violations (must stay 0), injected faults. */
  @Get('vendors')
  vendorStats() {
    return { vendors: this.vendors.all().map((v) => v.stats()), reindex: this.indexer.peaks() };
  }

  @Post('vendors/reset-stats')
  @HttpCode(HttpStatus.NO_CONTENT)
  resetVendorStats(): void {
    for (const v of this.vendors.all()) v.resetStats();
    this.timeline.clear();
  }

  /** Created / first-started / finished times of the tasks this process saw (load script). */
  @Get('timeline')
  taskTimeline() {
    return this.timeline.list();
  }

  /** Enqueues tonight's archive batch now instead of waiting for the cron. */
  @Post('archive/run')
  @HttpCode(HttpStatus.ACCEPTED)
  async runArchive(@Body() body: RunArchiveDto) {
    return { queued: await this.archive.run(body.documentsPerTenant) };
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
