import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { TenantDirectory } from '../tenancy/tenant-directory';
import { WorkSubmitter } from '../work/work-submitter';
import { archiveDocuments, nightOf } from './archive-documents';
import { ARCHIVE_CRON } from './archive-schedule';

/** Tasks per submitMany call, so one night of a big tenant is a few store transactions. */
const CHUNK = 1000;

/**
 * Every night, enqueues each tenant's archive batch at BATCH priority (the size is
 * DEMO_ARCHIVE_SIZE per tenant, the schedule DEMO_ARCHIVE_CRON). Idempotency keys carry the
 * night, so running it twice the same night queues nothing new.
 */
@Injectable()
export class NightlyArchiveJob {
  private readonly logger = new Logger('NightlyArchive');

  constructor(
    private readonly tenants: TenantDirectory,
    private readonly work: WorkSubmitter,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @Cron(ARCHIVE_CRON, { name: 'nightly-archive' })
  async onSchedule(): Promise<void> {
    try {
      await this.run();
    } catch (e) {
      this.logger.error(`nightly archive failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Enqueues tonight's batch now; returns the number of tasks per tenant (new or existing). */
  async run(documentsPerTenant = this.config.archive.documentsPerTenant, now = new Date()): Promise<Record<string, number>> {
    const night = nightOf(now);
    const counts: Record<string, number> = {};
    for (const tenant of this.tenants.all()) {
      const { docs, keys } = archiveDocuments(tenant.id, night, documentsPerTenant);
      for (let i = 0; i < docs.length; i += CHUNK) {
        await this.work.submitArchive(tenant, docs.slice(i, i + CHUNK), keys.slice(i, i + CHUNK));
      }
      counts[tenant.id] = docs.length;
    }
    this.logger.log(`archive of ${night}: ${Object.entries(counts).map(([t, n]) => `${t}=${n}`).join(', ')}`);
    return counts;
  }
}
