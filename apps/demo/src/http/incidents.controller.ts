import { Body, Controller, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import type { TenantConfig } from '../config/demo-config';
import { ApiKeyGuard } from '../tenancy/api-key.guard';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { WorkSubmitter } from '../work/work-submitter';
import { RecoverIncidentDto } from './dto/recover-incident.dto';
import { ResourceIdPipe } from './resource-id.pipe';
import { taskView } from './task-view';

/** POST /incidents/:id/recover: re-runs an incident's records at URGENT priority, once per incident. */
@Controller('incidents')
@UseGuards(ApiKeyGuard)
export class IncidentsController {
  constructor(private readonly work: WorkSubmitter) {}

  @Post(':id/recover')
  @HttpCode(HttpStatus.ACCEPTED)
  async recover(@CurrentTenant() tenant: TenantConfig, @Param('id', ResourceIdPipe) id: string, @Body() body: RecoverIncidentDto) {
    return taskView(await this.work.recoverIncident(tenant, id, body.records ?? []));
  }
}
