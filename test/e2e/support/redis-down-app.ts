/**
 * Starts an app whose Redis is down (REDIS_URL points at a port nothing listens on), with
 * initTimeoutMs from PQ_INIT_TIMEOUT_MS: start-up must log what it waits for, fail with a clear
 * error, and leave nothing open, so that this process ends by itself (run by
 * named-queues-redis.e2e.spec.ts).
 */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { PriorityQueueModule } from 'nestjs-priority-queue';
import { redisStore } from 'nestjs-priority-queue/redis';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    PriorityQueueModule.forRoot({ store: redisStore({ url: process.env.REDIS_URL!, initTimeoutMs: Number(process.env.PQ_INIT_TIMEOUT_MS) }) }),
  ],
})
class DownAppModule {}

NestFactory.createApplicationContext(DownAppModule, { abortOnError: false, logger: ['warn'] }).then(
  () => console.log('started?!'),
  (e: Error & { code?: string }) => {
    console.log(`start-up failed: ${e.code}: ${e.message}`);
    process.exitCode = 3;
  },
);
