/**
 * The README's Redis example as a process of its own (run by named-queues-redis.e2e.spec.ts):
 * a worker app whose store backend is redisStore({ url }), so the library owns the connection.
 * It runs `greet` tasks of the `greetings` queue until the parent says "close" over IPC; then it
 * drops the IPC channel and closes the app, and must exit by itself (nothing left open).
 */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { PriorityQueueModule, PriorityTask, type HandlerContext } from 'nestjs-priority-queue';
import { redisStore } from 'nestjs-priority-queue/redis';

@PriorityTask('greet', { queue: 'greetings' })
class GreetHandler {
  run({ payload }: HandlerContext<{ name: string }>) {
    return `hello ${payload.name} from process ${process.pid}`;
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    PriorityQueueModule.forRoot({ store: redisStore({ url: process.env.REDIS_URL!, prefix: process.env.PQ_PREFIX }), logLevel: 'warn' }),
    PriorityQueueModule.registerQueue({ name: 'greetings', workers: { idlePollMs: 50 } }),
  ],
  providers: [GreetHandler],
})
class WorkerAppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerAppModule, { logger: ['error', 'warn'] });
  process.send!({ kind: 'ready' });
  process.once('message', () => {
    process.disconnect();
    void app.close().then(() => console.log('closed'));
  });
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
  process.disconnect?.();
});
