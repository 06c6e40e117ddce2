import { Controller, Delete, Get, NotFoundException, Param, UseGuards } from '@nestjs/common';
import type { Task } from 'nestjs-priority-queue';
import { QueueDirectory } from '../queues/queue-directory';
import type { TenantConfig } from '../config/demo-config';
import { ApiKeyGuard } from '../tenancy/api-key.guard';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { taskView } from './task-view';

/** GET /tasks/:id and DELETE /tasks/:id (cancel), for the tasks of the caller's tenant. */
@Controller('tasks')
@UseGuards(ApiKeyGuard)
export class TasksController {
  constructor(private readonly queues: QueueDirectory) {}

  @Get(':id')
  async get(@CurrentTenant() tenant: TenantConfig, @Param('id') id: string) {
    return taskView(await this.own(tenant, id));
  }

  @Delete(':id')
  async cancel(@CurrentTenant() tenant: TenantConfig, @Param('id') id: string) {
    await this.own(tenant, id);
    return taskView(await (await this.queues.find(id))!.manager.cancel(id));
  }

  /** The task if it belongs to the tenant; 404 otherwise (other tenants' ids are not revealed). */
  private async own(tenant: TenantConfig, id: string): Promise<Task> {
    const task = (await this.queues.find(id))?.task;
    if (!task || task.tenantId !== tenant.id) throw new NotFoundException(`no task ${id} for tenant ${tenant.id}`);
    return task;
  }
}
