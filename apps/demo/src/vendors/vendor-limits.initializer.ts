import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AdmissionGuard, InjectAdmissionGuard } from 'nestjs-priority-queue';
import { DEMO_CONFIG, VENDOR_NAMES, type DemoConfig } from '../config/demo-config';
import { OCR_QUEUE } from '../queues/demo-queues';

/**
 * Writes each vendor's contract into the queue's admission limits at start-up, before the
 * workers start (onModuleInit runs before any onApplicationBootstrap): the provider rate
 * (burst 1) and the concurrent jobs per account. Limits live in the store, so every
 * worker process obeys them; the admin routes change them at runtime.
 */
@Injectable()
export class VendorLimitsInitializer implements OnModuleInit {
  private readonly logger = new Logger('VendorLimits');

  constructor(
    @InjectAdmissionGuard(OCR_QUEUE) private readonly guard: AdmissionGuard,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    for (const name of VENDOR_NAMES) {
      const contract = this.config.vendors[name];
      await this.guard.setProviderRate(name, contract.submitsPerSecond, 1);
      await this.guard.setAccountConcurrency(name, null, contract.maxConcurrentJobsPerAccount);
      const perAccount = contract.maxConcurrentJobsPerAccount ?? 'unlimited';
      this.logger.log(`${name}: ${contract.submitsPerSecond} submits/s, ${perAccount} concurrent jobs per account`);
    }
  }
}
