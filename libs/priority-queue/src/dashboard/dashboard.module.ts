import { Controller, Module, UseFilters, UseGuards, type CanActivate, type DynamicModule, type Type } from '@nestjs/common';
import { DashboardActivity } from './activity';
import { DashboardErrorFilter } from './dashboard-error.filter';
import { DashboardViews } from './dashboard-views';
import { DashboardWriteGuard } from './dashboard-write.guard';
import { DashboardReadController, DashboardWriteController } from './dashboard.controllers';
import { DASHBOARD_OPTIONS, resolveDashboardOptions, type PriorityQueueDashboardOptions } from './dashboard.options';
import { LiveUpdates } from './live-updates';
import { QueueSource } from './queue-source';

/**
 * A web page and its JSON API to see and steer the queues, served by the app itself (no CDN,
 * works offline). Every route runs the app's guard first; without a guard the module refuses to
 * start unless `readOnly: true` and `unsafeNoAuth: true`.
 *
 *   PriorityQueueDashboardModule.forRoot({ path: 'admin/queues', guard: AdminGuard, imports: [AuthModule] })
 */
@Module({})
export class PriorityQueueDashboardModule {
  static forRoot(options: PriorityQueueDashboardOptions): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    const appGuards: Array<CanActivate | Type<CanActivate>> = resolved.guard ? [resolved.guard] : [];
    const read = mount(class PriorityQueueDashboardController extends DashboardReadController {}, resolved.path, appGuards);
    const write = mount(class PriorityQueueDashboardActionsController extends DashboardWriteController {}, resolved.path, [
      ...appGuards,
      new DashboardWriteGuard(resolved.readOnly),
    ]);
    return {
      module: PriorityQueueDashboardModule,
      imports: options.imports ?? [],
      controllers: [read, write],
      providers: [{ provide: DASHBOARD_OPTIONS, useValue: resolved }, QueueSource, DashboardActivity, DashboardViews, LiveUpdates],
    };
  }
}

/** Puts a controller class at `path` behind `guards`, with the dashboard's error filter. */
function mount<T extends Type<unknown>>(controller: T, path: string, guards: Array<CanActivate | Type<CanActivate>>): T {
  Controller(path)(controller);
  if (guards.length) UseGuards(...guards)(controller);
  UseFilters(DashboardErrorFilter)(controller);
  return controller;
}
