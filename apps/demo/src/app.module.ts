import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { PriorityQueueModule, type StoreConfig } from 'nestjs-priority-queue';
import { NightlyArchiveJob } from './archive/nightly-archive.job';
import { DEMO_CONFIG, type DemoConfig } from './config/demo-config';
import { DemoConfigModule } from './config/demo-config.module';
import { HandlersModule } from './handlers/handlers.module';
import { AdminController } from './http/admin.controller';
import { DocumentsController } from './http/documents.controller';
import { IncidentsController } from './http/incidents.controller';
import { QueueController } from './http/queue.controller';
import { TasksController } from './http/tasks.controller';
import { TenantsController } from './http/tenants.controller';
import { AdminKeyGuard } from './tenancy/admin-key.guard';
import { AnyKeyGuard } from './tenancy/any-key.guard';
import { ApiKeyGuard } from './tenancy/api-key.guard';
import { TenantDirectory } from './tenancy/tenant-directory';
import { TaskTimeline } from './timeline/task-timeline';
import { VendorsModule } from './vendors/vendors.module';
import { WorkSubmitter } from './work/work-submitter';

/**
 * The demo application. `store` is what PQ_STORE selected (see store/store-connection.ts);
 * the app imports ScheduleModule.forRoot() once, for its own @Cron and the queue's workers.
 */
@Module({})
export class AppModule {
  static forRoot(config: DemoConfig, store: StoreConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ScheduleModule.forRoot(),
        DemoConfigModule.forRoot(config),
        PriorityQueueModule.forRootAsync({
          inject: [DEMO_CONFIG],
          useFactory: (cfg: DemoConfig) => ({ store, workers: cfg.workers }),
        }),
        VendorsModule,
        HandlersModule,
      ],
      controllers: [DocumentsController, IncidentsController, TenantsController, TasksController, QueueController, AdminController],
      providers: [TenantDirectory, ApiKeyGuard, AdminKeyGuard, AnyKeyGuard, WorkSubmitter, TaskTimeline, NightlyArchiveJob],
    };
  }
}
