import { Body, Controller, ForbiddenException, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import type { TenantConfig } from '../config/demo-config';
import { ApiKeyGuard } from '../tenancy/api-key.guard';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { WorkSubmitter } from '../work/work-submitter';
import { ReindexDto } from './dto/reindex.dto';
import { ResourceIdPipe } from './resource-id.pipe';
import { taskView } from './task-view';

/** POST /tenants/:id/reindex: queues a re-index flow; one runs at a time per tenant. */
@Controller('tenants')
@UseGuards(ApiKeyGuard)
export class TenantsController {
  constructor(private readonly work: WorkSubmitter) {}

  @Post(':id/reindex')
  @HttpCode(HttpStatus.ACCEPTED)
  async reindex(@CurrentTenant() tenant: TenantConfig, @Param('id', ResourceIdPipe) id: string, @Body() body: ReindexDto) {
    if (id !== tenant.id) throw new ForbiddenException(`your API key belongs to tenant ${tenant.id}, not ${id}`);
    return taskView(await this.work.reindex(tenant, body.reason));
  }
}
