export { PriorityQueueDashboardModule } from './dashboard.module';
export type { PriorityQueueDashboardOptions } from './dashboard.options';
export { DASHBOARD_WRITE_HEADER } from './dashboard-write.guard';
