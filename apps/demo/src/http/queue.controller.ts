import { Controller, Get, UseGuards } from '@nestjs/common';
import { AdmissionGuard, InjectAdmissionGuard } from 'nestjs-priority-queue';
import { OCR_QUEUE } from '../queues/demo-queues';
import { QueueDirectory } from '../queues/queue-directory';
import { priorityLevelName } from '../priority/priority-level';
import { AnyKeyGuard } from '../tenancy/any-key.guard';

/** GET /queue/stats: pending and oldest wait per priority, in flight per vendor, account, tenant. */
@Controller('queue')
@UseGuards(AnyKeyGuard)
export class QueueController {
  constructor(
    private readonly queues: QueueDirectory,
    @InjectAdmissionGuard(OCR_QUEUE) private readonly guard: AdmissionGuard,
  ) {}

  @Get('stats')
  async stats() {
    const [s, limits] = await Promise.all([this.queues.stats(), this.guard.getLimits()]);
    return {
      now: s.now,
      byStatus: s.byStatus,
      pending: s.pending.map((p) => ({ ...p, level: priorityLevelName(p.priority) })),
      inFlight: {
        byVendor: s.inFlightByProvider,
        byAccount: s.inFlightByAccount,
        byTenant: s.inFlightByTenant,
        byConcurrencyKey: s.inFlightByConcurrencyKey,
      },
      pausedVendors: Object.entries(limits.providers)
        .filter(([, p]) => p.paused)
        .map(([name]) => name),
    };
  }
}
