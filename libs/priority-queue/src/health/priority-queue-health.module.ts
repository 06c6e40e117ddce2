import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { PriorityQueueHealthIndicator } from './priority-queue-health.indicator';

/** Provides PriorityQueueHealthIndicator (import it next to PriorityQueueModule.forRoot()). */
@Module({
  imports: [TerminusModule],
  providers: [PriorityQueueHealthIndicator],
  exports: [PriorityQueueHealthIndicator],
})
export class PriorityQueueHealthModule {}
