/**
 * `nestjs-priority-queue/health`: a @nestjs/terminus health indicator of the queues (needs the
 * optional peer dependency @nestjs/terminus 11 or later). A separate entry point so that the
 * library root never loads terminus.
 */
export { PriorityQueueHealthIndicator, type PriorityQueueHealthOptions, type QueueHealth } from './health/priority-queue-health.indicator';
export { PriorityQueueHealthModule } from './health/priority-queue-health.module';
