import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { AdmissionGuard, InjectAdmissionGuard } from 'nestjs-priority-queue';
import { DEMO_CONFIG, type DemoConfig, type TenantConfig } from '../config/demo-config';
import { OCR_QUEUE } from '../queues/demo-queues';
import { QueueDirectory } from '../queues/queue-directory';
import { ApiKeyGuard } from '../tenancy/api-key.guard';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { tenantQueueView } from './queue-views';

/**
 * GET /queue/stats: the caller's tenant's view of the queues (its own work only). The whole-queue
 * view is an operator route: GET /admin/queue/stats.
 */
@Controller('queue')
@UseGuards(ApiKeyGuard)
export class QueueController {
  constructor(
    private readonly queues: QueueDirectory,
    @InjectAdmissionGuard(OCR_QUEUE) private readonly guard: AdmissionGuard,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @Get('stats')
  async stats(@CurrentTenant() tenant: TenantConfig) {
    const [s, limits] = await Promise.all([this.queues.stats(), this.guard.getLimits()]);
    return tenantQueueView(tenant, this.config.vendorByPlan[tenant.plan], s, limits);
  }
}
