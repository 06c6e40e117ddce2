/**
 * CPU per drained task on Redis, split into redis-server and this Node process, for our Redis
 * store and BullMQ, interleaved run by run on ONE server: the bench targets and the drain
 * scenario's steps (pre-submit N tasks in chunks of 1,000, start a throughput worker at
 * concurrency 16, wait for the last handler call). The counterpart of pg-cpu-split.ts.
 *
 * redis-server CPU = utime + stime of its process (/proc/<pid>/stat, clock ticks: all its
 * threads), Node CPU = process.cpuUsage(), both over the drain only. The drain runs in this one
 * Node process, so its jobs/s cannot pass 1e6 / Node µs per task: when Node's figure is most of
 * the wall time per task, the client is the bound, whatever the server does.
 *
 * `node -r ./test/support/register.js test/bench/profile/redis-cpu-split.ts [tasks=20000] [rounds=3] [targets=ours-redis,bullmq]`
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startServers } from '../lib/servers';
import { chunks, Countdown, nowMs } from '../lib/stats';
import { makeJobs } from '../scenario';
import type { BenchTarget } from '../target';
import { createTarget } from '../targets';
import { interleavedRounds, printMeans } from './support/interleaved-rounds';
import { runProfile } from './support/run-profile';

const TICK_US = 1_000_000 / 100; // CLK_TCK = 100 on Linux

function ticks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime, stime
}

/** The pid of the redis-server listening on `port` (its command line names host:port). */
function redisPid(port: number): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.startsWith('/usr/bin/redis-server') || cmd.includes('redis-server')) {
        if (cmd.includes(`:${port}`) || cmd.includes(`--port\0${port}`)) return Number(name);
      }
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no redis-server process for port ${port}`);
}

interface Row {
  target: string;
  jobsPerSec: number;
  redisUs: number;
  nodeUs: number;
  wallUs: number;
  load: number;
}

async function drainOnce(target: BenchTarget, n: number, round: number, pid: number): Promise<Row> {
  const ns = `cpu${round}${target.id.replace(/[^a-z]/g, '')}${Date.now() % 100000}`;
  await target.begin(ns);
  try {
    for (const c of chunks(makeJobs(n, 42), 1000)) await target.submitBulk(c);
    const done = new Countdown(n, 300_000, 'drain');
    const r0 = ticks(pid);
    const cpu0 = process.cpuUsage();
    const t0 = nowMs();
    const worker = await target.startWorker({ concurrency: 16, purpose: 'throughput', handler: () => done.tick() });
    await done.arm();
    const elapsed = nowMs() - t0;
    const cpu = process.cpuUsage(cpu0);
    const r1 = ticks(pid);
    await worker.stop();
    return {
      target: target.id,
      jobsPerSec: (n * 1000) / elapsed,
      redisUs: ((r1 - r0) * TICK_US) / n,
      nodeUs: (cpu.user + cpu.system) / n,
      wallUs: (elapsed * 1000) / n,
      load: loadavg()[0],
    };
  } finally {
    await target.end();
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 3);
  const ids = (process.argv[4] ?? 'ours-redis,bullmq').split(',');
  const servers = await startServers(new Set(['redis']), () => undefined);
  try {
    const pid = redisPid(Number(new URL(servers.env.redis!.url).port));
    const targets = ids.map((id) => createTarget(id, servers.env));
    for (const t of targets) await t.open();
    for (const t of targets) await drainOnce(t, Math.min(n, 2000), 0, pid); // warm-up, not reported
    const rows = await interleavedRounds(
      targets,
      rounds,
      (t, r) => drainOnce(t, n, r, pid),
      (row, r) =>
        `${row.target.padEnd(16)} round ${r}: ${row.jobsPerSec.toFixed(0).padStart(6)} jobs/s  wall ${row.wallUs.toFixed(1).padStart(5)} µs/task  Redis ${row.redisUs.toFixed(1).padStart(5)}  Node ${row.nodeUs.toFixed(1).padStart(5)} µs/task  load ${row.load.toFixed(2)}`,
    );
    printMeans(
      targets,
      rows,
      (mean) => `${mean((r) => r.jobsPerSec).toFixed(0).padStart(6)} jobs/s  wall ${mean((r) => r.wallUs).toFixed(1)}  Redis ${mean((r) => r.redisUs).toFixed(1)}  Node ${mean((r) => r.nodeUs).toFixed(1)} µs/task`,
    );
    for (const t of targets) await t.close();
  } finally {
    await servers.stop();
  }
}

runProfile(main);
