import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AdmissionGuard, InjectAdmissionGuard } from 'nestjs-priority-queue';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { OCR_QUEUE } from '../queues/demo-queues';
import { fairShareEnabled } from './fair-share';

/**
 * Writes each tenant's fair-share weight (its plan's, fairness/fair-share.ts) into the `ocr`
 * queue at start-up, before the workers start. Weights are decided here on the server, from the
 * tenant's plan, like priorities; they apply to tasks created afterwards and live in the store
 * (every worker process orders by them).
 */
@Injectable()
export class TenantWeightsInitializer implements OnModuleInit {
  private readonly logger = new Logger('FairShare');

  constructor(
    @InjectAdmissionGuard(OCR_QUEUE) private readonly guard: AdmissionGuard,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!fairShareEnabled(this.config)) {
      this.logger.log(`off on the ${this.config.store.kind} store: archive jobs of one priority level start in submit order`);
      return;
    }
    for (const tenant of this.config.tenants) await this.guard.setTenantWeight(tenant.id, this.config.fairShare.weightsByPlan[tenant.plan]);
    const weights = this.config.tenants.map((t) => `${t.id}=${this.config.fairShare.weightsByPlan[t.plan]}`).join(', ');
    this.logger.log(`fair share between tenants on the ocr queue, weights ${weights}`);
  }
}
