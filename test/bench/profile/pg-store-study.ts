/**
 * PostgreSQL CPU per task of the REAL store calls (TypeOrmTaskStore on schema v5), without the
 * Worker: create N tasks (chunks of 1,000), then claimSubmissions(limit) and complete every
 * claimed task (all in one event-loop turn: one complete batch), strictly one after the other,
 * so the server's CPU (postmaster + children, /proc) between two awaits belongs to that call.
 * Compare with pg-layout-study.ts variant `a` (the same statements without the function
 * machinery) to see what the PL/pgSQL claim / complete functions add per task.
 *
 * Node CPU (process.cpuUsage) of the same calls is printed too (store code + pg driver, no Worker).
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-store-study.ts <postgres url> <server data dir> [tasks=20000] [limit=48] [rounds=3]`
 * (url and data dir `-` `-`: starts its own throw-away server, test/support/servers/postgres-server.ts)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { fenceOf, TaskStatus } from '../../../libs/priority-queue/src/core/task';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { plainTask } from '../../support/new-task';
import { startPostgresServer } from '../../support/servers/postgres-server';
import { runProfile } from './support/run-profile';

const TICK_US = 10_000;

/** CPU ticks of the server's processes; BACKENDS_ONLY=1: only client backends (TCP connections), no background workers. */
const backendsOnly = process.env.BACKENDS_ONLY === '1';

function serverTicks(postmaster: number): number {
  let sum = 0;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      if (pid !== postmaster && Number(f[1]) !== postmaster) continue;
      if (backendsOnly && !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('127.0.0.1')) continue;
      sum += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return sum;
}

const newTask = (i: number, round: number) => plainTask({ id: `st-${round}-${i}`, type: 'bench', payload: { i, p: i % 10 }, priority: i % 10, providerKey: 'bench' });

async function main(): Promise<void> {
  const own = !process.argv[2] || process.argv[2] === '-' ? await startPostgresServer() : null;
  try {
    await study(own ? own.url : process.argv[2], own ? join(own.dir, 'data') : process.argv[3]);
  } finally {
    await own?.stop();
  }
}

async function study(url: string, dataDir: string): Promise<void> {
  const n = Number(process.argv[4] ?? 20_000);
  const limit = Number(process.argv[5] ?? 48);
  const rounds = Number(process.argv[6] ?? 3);
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const ds = new DataSource({ type: 'postgres', url, poolSize: 4, logging: false });
  await ds.initialize();
  try {
    for (let r = 0; r <= rounds; r++) {
      const prefix = `ss_${r}_`;
      const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: prefix });
      await store.init();
      const size = r === 0 ? 2000 : n;
      let t = serverTicks(postmaster);
      for (let i = 0; i < size; i += 1000) await store.create(Array.from({ length: Math.min(1000, size - i) }, (_, k) => newTask(i + k, r)));
      const createTicks = serverTicks(postmaster) - t;
      let claimTicks = 0;
      let completeTicks = 0;
      let claimNodeUs = 0;
      let completeNodeUs = 0;
      let done = 0;
      for (;;) {
        t = serverTicks(postmaster);
        let cpu = process.cpuUsage();
        const { claimed } = await store.claimSubmissions({ owner: 'w', limit, leaseMs: 30_000 });
        let used = process.cpuUsage(cpu);
        claimNodeUs += used.user + used.system;
        const t1 = serverTicks(postmaster);
        claimTicks += t1 - t;
        if (claimed.length === 0) break;
        cpu = process.cpuUsage();
        await Promise.all(claimed.map((task) => store.complete(fenceOf(task), { status: TaskStatus.SUCCEEDED, result: null })));
        used = process.cpuUsage(cpu);
        completeNodeUs += used.user + used.system;
        completeTicks += serverTicks(postmaster) - t1;
        done += claimed.length;
      }
      if (done !== size) throw new Error(`drained ${done} of ${size}`);
      await store.close();
      const tables: Array<{ name: string }> = await ds.query(`SELECT tablename AS name FROM pg_tables WHERE tablename LIKE $1`, [`${prefix}%`]);
      for (const x of tables) await ds.query(`DROP TABLE "${x.name}" CASCADE`);
      if (r === 0) continue;
      const us = (k: number) => ((k * TICK_US) / size).toFixed(1);
      console.log(`round ${r}: create ${us(createTicks)}  claim ${us(claimTicks)}  complete ${us(completeTicks)}  claim+complete ${us(claimTicks + completeTicks)} µs/task (server CPU, limit ${limit}); Node CPU claim ${(claimNodeUs / size).toFixed(1)}  complete ${(completeNodeUs / size).toFixed(1)} µs/task`);
    }
  } finally {
    await ds.destroy();
  }
}

runProfile(main);
