/**
 * A producer in a process of its own (worker-idle.spec.ts): opens its own DataSource, creates
 * `count` tasks of type 'job' on the given queue one by one, retries (requeue) the finished
 * tasks `requeue`, prints the ids created (one JSON line) and exits. Config in env PQ_SUBMIT:
 * { dataSource, tablePrefix, queue, count, requeue? }.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';

(async () => {
  const cfg = JSON.parse(process.env.PQ_SUBMIT ?? '{}') as { dataSource: object; tablePrefix: string; queue: string; count: number; requeue?: string[] };
  const ds = new DataSource(cfg.dataSource as never);
  await ds.initialize();
  const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: cfg.tablePrefix, queue: cfg.queue });
  await store.init();
  const ids: string[] = [];
  for (let i = 0; i < cfg.count; i++) {
    const [{ task }] = await store.create([
      { id: randomUUID(), idempotencyKey: null, type: 'job', payload: { i }, priority: 0, providerKey: 'job', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true },
    ]);
    ids.push(task.id);
  }
  for (const id of cfg.requeue ?? []) await store.requeue(id);
  process.stdout.write(JSON.stringify(ids) + '\n');
  await store.close();
  await ds.destroy();
})().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
