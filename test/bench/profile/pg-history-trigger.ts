/**
 * What the history trigger (schema v6) costs per transition on PostgreSQL, measured by the
 * server itself (clock_timestamp around one UPDATE that changes the status of N task rows), rows
 * created with history_limit 20 (trigger fires) against rows created with history_limit 0 (its
 * WHEN clause is false), interleaved, best of several. Server-side timing, so the load of a
 * shared machine weighs far less than in a drain's wall time. Each round: fresh rows, the two
 * transitions of a drain (claim, complete).
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-history-trigger.ts [rows=20000] [rounds=7]`
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TaskStatus, type NewTask } from '../../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { startPostgresServer } from '../../support/servers/postgres-server';

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 7);
  const pg = await startPostgresServer();
  const ds = new DataSource({ type: 'postgres', host: pg.host, port: pg.port, username: pg.user, password: pg.password, database: pg.database });
  await ds.initialize();
  try {
    const newTasks = (): NewTask[] =>
      Array.from({ length: rows }, (_, i) => ({
        id: randomUUID(),
        idempotencyKey: null,
        type: 't',
        payload: { i },
        priority: i % 7,
        providerKey: 'p',
        accountId: null,
        tenantId: null,
        concurrencyKey: null,
        delayMs: 0,
        timeoutMs: null,
        maxAttempts: 3,
        idempotent: true,
      }));
    await ds.query(`CREATE OR REPLACE FUNCTION hb_time_update(p_to varchar, p_queue varchar) RETURNS double precision LANGUAGE plpgsql AS $$
      DECLARE t0 timestamptz := clock_timestamp();
      BEGIN
        IF p_queue LIKE 'qinline%' THEN
          UPDATE hb_tasks SET status = p_to, version = version + 1, updated_at = updated_at + 1,
            history = CASE WHEN history IS NULL OR history = '' THEN '' ELSE
              (CASE WHEN length(history) > 140 AND length(history) - length(replace(history, chr(30), '')) >= 20
                THEN substr(history, strpos(history, chr(30)) + 1) ELSE history END) || chr(30) END
              || (updated_at + 1) || ',' || (array_position(ARRAY['PENDING_SUBMIT','SUBMITTING','SUBMITTED','RUNNING','SUCCEEDED','FAILED','CANCELED','TIMED_OUT','SUBMIT_UNKNOWN']::text[], status::text) - 1)
              || (array_position(ARRAY['PENDING_SUBMIT','SUBMITTING','SUBMITTED','RUNNING','SUCCEEDED','FAILED','CANCELED','TIMED_OUT','SUBMIT_UNKNOWN']::text[], p_to::text) - 1)
              || ',' || (version + 1)
          WHERE queue = p_queue;
        ELSE
          UPDATE hb_tasks SET status = p_to, version = version + 1, updated_at = updated_at + 1 WHERE queue = p_queue;
        END IF;
        RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6;
      END $$`).catch(() => undefined);
    const best: Record<string, { ms: number }> = {};
    // a drain's two transitions (claim, complete) on fresh rows, interleaved off / on, best of `rounds`
    const statuses = [TaskStatus.SUBMITTING, TaskStatus.SUCCEEDED];
    for (let r = 0; r < rounds; r++) {
      for (const variant of ['0', '20', 'inline']) {
        const limit = variant === '20' ? 20 : 0;
        const queue = `q${variant}_${r}`;
        const s = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'hb_', queue, historyLimit: limit });
        await s.init();
        const tasks = newTasks();
        for (let i = 0; i < rows; i += 5000) await s.create(tasks.slice(i, i + 5000));
        await ds.query('ANALYZE hb_tasks');
        for (const to of statuses) {
          const [res] = (await ds.query(`SELECT hb_time_update($1, $2) AS us`, [to, queue])) as Array<{ us: number }>;
          const key = `${variant}:${to}`;
          const ms = Number(res.us) / 1000;
          if (!best[key] || ms < best[key].ms) best[key] = { ms };
        }
        await ds.query(`DELETE FROM hb_tasks WHERE queue = $1`, [queue]);
      }
    }
    const us = (k: string) => (best[k].ms * 1000) / rows;
    for (const to of statuses) {
      console.log(
        `-> ${to.padEnd(11)} history off ${us(`0:${to}`).toFixed(2)} µs/row   trigger ${us(`20:${to}`).toFixed(2)} (+${(us(`20:${to}`) - us(`0:${to}`)).toFixed(2)})` +
          `   in the UPDATE ${us(`inline:${to}`).toFixed(2)} (+${(us(`inline:${to}`) - us(`0:${to}`)).toFixed(2)}) µs/row, best of ${rounds}`,
      );
    }
  } finally {
    await ds.destroy();
    await pg.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
