import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { PriorityQueueModule, type StoreBackend } from 'nestjs-priority-queue';
import { PriorityQueueHealthModule } from 'nestjs-priority-queue/health';
import { PriorityQueueDashboardModule } from 'nestjs-priority-queue/dashboard';
import { NightlyArchiveJob } from './archive/nightly-archive.job';
import { DEMO_CONFIG, type DemoConfig } from './config/demo-config';
import { DemoConfigModule } from './config/demo-config.module';
import { fairShareEnabled } from './fairness/fair-share';
import { TenantWeightsInitializer } from './fairness/tenant-weights.initializer';
import { HandlersModule } from './handlers/handlers.module';
import { AdminController } from './http/admin.controller';
import { DocumentsController } from './http/documents.controller';
import { HealthController } from './http/health.controller';
import { IncidentsController } from './http/incidents.controller';
import { QueueController } from './http/queue.controller';
import { TasksController } from './http/tasks.controller';
import { TenantsController } from './http/tenants.controller';
import { AdminKeyGuard } from './tenancy/admin-key.guard';
import { ApiKeyGuard } from './tenancy/api-key.guard';
import { DashboardAccessGuard } from './tenancy/dashboard-access.guard';
import { TenantDirectory } from './tenancy/tenant-directory';
import { demoQueuesModule } from './queues/demo-queues';
import { QueueDirectory } from './queues/queue-directory';
import { TaskTimeline } from './timeline/task-timeline';
import { VendorsModule } from './vendors/vendors.module';
import { WorkSubmitter } from './work/work-submitter';

/**
 * The demo application. `store` is the backend PQ_STORE selected (see store/store-connection.ts),
 * holding the two named queues `ocr` and `maintenance` (queues/demo-queues.ts); the app imports
 * ScheduleModule.forRoot() once, for its own @Cron and the queues' workers.
 */
@Module({})
export class AppModule {
  static forRoot(config: DemoConfig, store: StoreBackend): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ScheduleModule.forRoot(),
        DemoConfigModule.forRoot(config),
        PriorityQueueModule.forRootAsync({
          inject: [DEMO_CONFIG],
          useFactory: (cfg: DemoConfig) => ({ store, workers: cfg.workers }),
        }),
        demoQueuesModule(fairShareEnabled(config)),
        TerminusModule,
        PriorityQueueHealthModule,
        VendorsModule,
        HandlersModule,
        // the operators' page: http://127.0.0.1:3000/dashboard/, the admin key as the password
        PriorityQueueDashboardModule.forRoot({ path: 'dashboard', guard: DashboardAccessGuard, title: 'Demo queues' }),
      ],
      controllers: [DocumentsController, IncidentsController, TenantsController, TasksController, QueueController, AdminController, HealthController],
      providers: [TenantDirectory, ApiKeyGuard, AdminKeyGuard, WorkSubmitter, TaskTimeline, NightlyArchiveJob, QueueDirectory, TenantWeightsInitializer],
    };
  }
}
