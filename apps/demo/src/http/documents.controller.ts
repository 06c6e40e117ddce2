import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { TenantConfig } from '../config/demo-config';
import { ApiKeyGuard } from '../tenancy/api-key.guard';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { WorkSubmitter } from '../work/work-submitter';
import { DocumentDto } from './dto/document.dto';
import { CreateBatchDto } from './dto/create-batch.dto';
import { taskView } from './task-view';

/** POST /documents: one interactive upload. POST /batches: archive documents (BATCH priority). */
@Controller()
@UseGuards(ApiKeyGuard)
export class DocumentsController {
  constructor(private readonly work: WorkSubmitter) {}

  @Post('documents')
  @HttpCode(HttpStatus.ACCEPTED)
  async upload(@CurrentTenant() tenant: TenantConfig, @Body() body: DocumentDto) {
    return taskView(await this.work.submitDocument(tenant, body));
  }

  @Post('batches')
  @HttpCode(HttpStatus.ACCEPTED)
  async archive(@CurrentTenant() tenant: TenantConfig, @Body() body: CreateBatchDto) {
    const tasks = await this.work.submitArchive(tenant, body.documents);
    return { count: tasks.length, taskIds: tasks.map((t) => t.id) };
  }
}
