/**
 * One awaited submit on Redis, ours (PriorityQueue.submit through the bench's ours-redis target)
 * against BullMQ's Queue.add (the bench's bullmq target), side by side, at concurrency 1 as the
 * bench's `submit-one` runs it: client CPU per submit (process.cpuUsage), redis-server CPU per
 * submit (INFO cpu) and Redis' own usec per script call (INFO commandstats), after a warm-up.
 * Under valgrind the server's instructions per call are exact whatever the load:
 *
 * ```
 * valgrind --tool=callgrind --callgrind-out-file=/tmp/cgs.out redis-server --port 6391 --save '' &
 * REDIS_URL=redis://127.0.0.1:6391 CALLGRIND_PID=$! CALLGRIND_OUT=/tmp/cgs.out \
 *   node -r ./test/support/register.js test/bench/profile/redis-submit.ts 2000
 * ```
 *
 * prints, per side, redis-server instructions per submit inside command processing
 * (`processCommand` inclusive, so the server cron, which depends on wall time, is left out) and
 * the dump file, for `callgrind_annotate --inclusive=yes <file>`. Without REDIS_URL the script
 * starts the test harness's redis-server. PQ_ONLY=ours|peer runs one side (e.g. under
 * `node --cpu-prof`, then cpuprofile-top.ts); PQ_ALTERNATE=<blocks> alternates blocks of n
 * submits of both sides instead (see alternate).
 * `node -r ./test/support/register.js test/bench/profile/redis-submit.ts [n]`
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import IORedis from 'ioredis';
import { startServers } from '../lib/servers';
import { makeJobs } from '../scenario';
import { bullmqTarget } from '../targets/bullmq';
import { ourRedisTarget } from '../targets/ours-redis';
import type { BenchEnv, BenchTarget } from '../target';

const cg = process.env.CALLGRIND_PID;
const cgOut = process.env.CALLGRIND_OUT;

/** Dumps (and zeroes) the callgrind counts under `name`; a no-op without valgrind. */
function dump(name: string): void {
  if (cg) execFileSync('callgrind_control', ['-d', name, cg], { stdio: 'ignore' });
}

/** The dump file callgrind wrote for `name` (its "desc: Trigger" line names it). */
function dumpFile(name: string): string | null {
  if (!cgOut) return null;
  const dir = dirname(cgOut);
  const base = basename(cgOut);
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(base + '.')) continue;
    const head = readFileSync(join(dir, f), 'utf8').slice(0, 2000);
    if (new RegExp(`desc: Trigger: .*\\b${name}\\b`).test(head)) return join(dir, f);
  }
  return null;
}

/** processCommand's inclusive instructions in a dump (callgrind_annotate). */
function processCommandIr(file: string): number {
  const out = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const line = out.split('\n').find((l) => /\sprocessCommand\b|:processCommand\s/.test(l));
  if (!line) throw new Error(`no processCommand line in ${file}`);
  return Number(line.trim().split(/\s+/)[0].replace(/,/g, ''));
}

async function serverCpuUs(admin: IORedis): Promise<number> {
  const info = await admin.info('cpu');
  const v = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)![1]);
  return (v('used_cpu_user') + v('used_cpu_sys')) * 1e6;
}

async function scriptUsec(admin: IORedis): Promise<{ calls: number; usec: number }> {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
  return m ? { calls: Number(m[1]), usec: Number(m[2]) } : { calls: 0, usec: 0 };
}

async function side(name: string, target: BenchTarget, n: number, admin: IORedis): Promise<void> {
  await target.open();
  await target.begin(`sub${name}`);
  try {
    const warm = makeJobs(300, 3);
    for (const j of warm) await target.submitOne(j);
    const jobs = makeJobs(n, 7, 300);
    await admin.config('RESETSTAT');
    const server0 = await serverCpuUs(admin);
    dump(`warm_${name}`);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const j of jobs) await target.submitOne(j);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    dump(`run_${name}`);
    const server = (await serverCpuUs(admin)) - server0;
    const s = await scriptUsec(admin);
    const file = dumpFile(`run_${name}`);
    const ir = file ? ` redis-server instructions ${(processCommandIr(file) / n / 1000).toFixed(1)}k per submit (${file});` : '';
    console.log(
      `${name}: client CPU ${((cpu.user + cpu.system) / n).toFixed(1)} µs (user ${(cpu.user / n).toFixed(1)}), server CPU ${(server / n).toFixed(1)} µs, ` +
        `script ${(s.usec / Math.max(1, s.calls)).toFixed(1)} µs/call (${(s.calls / n).toFixed(2)} calls) per submit;${ir} ` +
        `${((n * 1000) / ms).toFixed(0)} submits/s (hint)`,
    );
  } finally {
    await target.end();
    await target.close();
  }
}

/**
 * PQ_ALTERNATE=<blocks>: both targets open at once, `blocks` blocks of n submits each, ours then
 * BullMQ in turn; prints the median rate of each and the median of the per-block ratios (a load
 * that comes and goes hits both sides of a pair alike, unlike two long runs one after the other).
 */
async function alternate(env: BenchEnv, n: number, blocks: number): Promise<void> {
  const sides: Array<[string, BenchTarget]> = [
    ['ours', ourRedisTarget(env)],
    ['bullmq', bullmqTarget(env)],
  ];
  for (const [name, t] of sides) {
    await t.open();
    await t.begin(`alt${name}`);
    for (const j of makeJobs(300, 3)) await t.submitOne(j);
  }
  const rates: number[][] = [[], []];
  try {
    for (let b = 0; b < blocks; b++) {
      for (let k = 0; k < 2; k++) {
        const jobs = makeJobs(n, 7 + b, 300 + b * n);
        const t0 = performance.now();
        for (const j of jobs) await sides[k][1].submitOne(j);
        rates[k].push((n * 1000) / (performance.now() - t0));
      }
    }
  } finally {
    for (const [, t] of sides) {
      await t.end();
      await t.close();
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ratios = rates[0].map((r, i) => r / rates[1][i]);
  console.log(
    `alternating ${blocks} x ${n} submits: ours ${median(rates[0]).toFixed(0)}/s, BullMQ ${median(rates[1]).toFixed(0)}/s (medians); ` +
      `ours/BullMQ per pair: median ${median(ratios).toFixed(2)}, ${ratios.map((r) => r.toFixed(2)).join(' ')}`,
  );
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 2000);
  const servers = process.env.REDIS_URL ? null : await startServers(new Set(['redis']), () => undefined);
  const url = new URL(process.env.REDIS_URL ?? servers!.env.redis!.url);
  const env: BenchEnv = { redis: { host: url.hostname, port: Number(url.port), url: url.toString() } };
  const admin = new IORedis(url.toString(), { maxRetriesPerRequest: null });
  const only = process.env.PQ_ONLY;
  try {
    if (process.env.PQ_ALTERNATE) return await alternate(env, n, Number(process.env.PQ_ALTERNATE));
    if (only !== 'peer') await side('ours', ourRedisTarget(env), n, admin);
    if (only !== 'ours') await side('bullmq', bullmqTarget(env), n, admin);
  } finally {
    admin.disconnect();
    await servers?.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
