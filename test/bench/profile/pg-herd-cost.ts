/**
 * What one wake-up of N idle PostgreSQL workers costs, part by part (issue 15 §3): CPU of this
 * Node process (process.cpuUsage) and of the server (support/server-cpu.ts) per round, mean of
 * 30 rounds 100 ms apart, for each part alone:
 * - notify: one NOTIFY reaching N listening connections that do nothing with it;
 * - claim / polls / select: N stores (own DataSource each, as N processes) sending at once an empty
 *   claimSubmissions / claimPolls / `SELECT 1`, as the workers a NOTIFY woke do;
 * and one call at a time on one store (the cost without the herd), per call.
 * `node -r ./test/support/register.js test/bench/profile/pg-herd-cost.ts [N]`
 */
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { sleep } from '../lib/stats';
import { runProfile } from './support/run-profile';
import { postmasterOf, serverCpuMs } from './support/server-cpu';

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'notification', fn: () => void): void;
}

const ROUNDS = 30;

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 32);
  const servers = await startServers(new Set(['postgres']), () => undefined);
  const url = servers.env.postgres!.url;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client } = require('pg') as { Client: new (o: object) => PgClient };
  const clients: PgClient[] = [];
  const stores: Array<{ ds: DataSource; store: TypeOrmTaskStore }> = [];
  try {
    const probe = new Client({ connectionString: url });
    await probe.connect();
    const postmaster = postmasterOf(Number((await probe.query('SELECT pg_backend_pid() AS p')).rows[0].p));
    clients.push(probe);
    const request = { owner: 'o', limit: 16, leaseMs: 30_000 };
    const ops: Record<string, (s: (typeof stores)[number]) => Promise<unknown>> = {
      claim: (s) => s.store.claimSubmissions(request),
      polls: (s) => s.store.claimPolls(request),
      select: (s) => s.ds.query('SELECT 1'),
    };
    const measure = async (label: string, round: () => Promise<unknown>, per = 1) => {
      let node = 0;
      let pg = 0;
      for (let k = 0; k < ROUNDS; k++) {
        await sleep(100);
        const p0 = serverCpuMs(postmaster);
        const c0 = process.cpuUsage();
        await round();
        await sleep(30); // what the round set off ends (listeners' reads)
        const c = process.cpuUsage(c0);
        node += (c.user + c.system) / 1000;
        pg += serverCpuMs(postmaster) - p0;
      }
      const f = (ms: number) => (ms / ROUNDS / per).toFixed(per > 1 ? 3 : 1);
      console.log(`${label}: Node ${f(node)} ms, PostgreSQL ${f(pg)} ms${per > 1 ? ' per call' : ''}`);
    };
    for (let i = 0; i < n; i++) {
      const c = new Client({ connectionString: url });
      await c.connect();
      await c.query('LISTEN hc_herd');
      c.on('notification', () => undefined);
      clients.push(c);
    }
    const sender = new Client({ connectionString: url });
    await sender.connect();
    clients.push(sender);
    await measure(`one NOTIFY to ${n} listeners`, () => sender.query("NOTIFY hc_herd, 's'"));
    for (const c of clients.splice(0)) await c.end();
    for (let i = 0; i < n; i++) {
      const ds = new DataSource({ type: 'postgres', url, logging: false });
      await ds.initialize();
      const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'hc_' });
      await store.init();
      stores.push({ ds, store });
    }
    for (const [op, call] of Object.entries(ops)) {
      for (let k = 0; k < 5; k++) await Promise.all(stores.map(call)); // plans and connections warm
      await measure(`${n} x ${op} at once`, () => Promise.all(stores.map(call)));
      await measure(`${op}, one at a time`, async () => {
        for (let k = 0; k < 100; k++) await call(stores[0]);
      }, 100);
    }
  } finally {
    for (const c of clients) await c.end().catch(() => undefined);
    for (const s of stores) {
      await s.store.close().catch(() => undefined);
      await s.ds.destroy().catch(() => undefined);
    }
    await servers.stop();
  }
}

runProfile(main);
