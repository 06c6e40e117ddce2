/**
 * `nestjs-priority-queue/dashboard`: PriorityQueueDashboardModule, a web page and JSON API to
 * see and steer the queues. Loads nothing the root entry does not already load.
 */
export * from './dashboard/index';
