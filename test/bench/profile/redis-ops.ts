/**
 * Redis time per store operation: creates a backlog, then claims all of it in batches of 16
 * (no completions), then completes every task; prints Redis' busy time per phase from
 * INFO commandstats (a script's time includes the commands it calls), then the fixed cost of one
 * script call (claims on the empty queue, renewals of one lease). "server CPU" is redis-server's
 * used_cpu (user + system, so also request parsing and reply writing) per task of the phase. `node -r ./test/support/register.js test/bench/profile/redis-ops.ts [tasks] [batch]`
 */
import { execFileSync } from 'node:child_process';
import IORedis from 'ioredis';
import { RedisTaskStore } from '../../../libs/priority-queue/src/stores/redis/redis-task-store';
import { fenceOf, TaskStatus, type NewTask, type Task } from '../../../libs/priority-queue/src/core/task';
import { startServers } from '../lib/servers';
import { makeJobs } from '../scenario';
import { chunks, nowMs } from '../lib/stats';

let cpuMark = 0;
/** redis-server CPU time (user + system, µs) since the last call: robust to a loaded machine. */
async function serverCpu(admin: IORedis): Promise<number> {
  const info = await admin.info('cpu');
  const v = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)![1]);
  const now = (v('used_cpu_user') + v('used_cpu_sys')) * 1e6;
  const d = now - cpuMark;
  cpuMark = now;
  return d;
}

/**
 * Per-call script durations from the slow log (every command logged): the median and lower
 * quartile of the phase's EVALSHA calls. A call that lost the CPU to another process is an
 * outlier here, so these stay put on a loaded machine where the phase totals do not.
 */
async function callTimes(admin: IORedis): Promise<{ median: number; q1: number; calls: number }> {
  const log = (await admin.call('SLOWLOG', 'GET', '-1')) as Array<[number, number, number, string[]]>;
  await admin.call('SLOWLOG', 'RESET');
  const us = log.filter((e) => String(e[3][0]).toLowerCase() === 'evalsha').map((e) => Number(e[2])).sort((a, b) => a - b);
  return { median: us[Math.floor(us.length / 2)] ?? 0, q1: us[Math.floor(us.length / 4)] ?? 0, calls: us.length };
}

async function busy(admin: IORedis): Promise<{ usec: number; calls: number; cpu: number; detail: string }> {
  const cpu = await serverCpu(admin);
  const lines = (await admin.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat_'));
  let usec = 0;
  let inner = 0;
  let calls = 0;
  const parts: string[] = [];
  for (const l of lines) {
    const [name, rest] = l.split(':');
    const f = Object.fromEntries(rest.trim().split(',').map((kv) => kv.split('=')));
    const script = name === 'cmdstat_evalsha' || name === 'cmdstat_eval';
    // a script's time includes the commands it calls: count those once
    if (script) {
      usec += Number(f.usec);
      calls += Number(f.calls);
    } else inner += Number(f.usec);
    parts.push(`${name.slice(8)}=${f.calls}/${(Number(f.usec) / 1000).toFixed(1)}ms`);
  }
  await admin.config('RESETSTAT');
  return { usec, calls, cpu, detail: `commands ${(inner / 1000).toFixed(0)} ms, script overhead ${((usec - inner) / 1000).toFixed(0)} ms; ${parts.join(' ')}` };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const batch = Number(process.argv[3] ?? 16);
  // REDIS_URL: use that server (e.g. one run under valgrind) instead of starting one
  const servers = process.env.REDIS_URL ? null : await startServers(new Set(['redis']), () => undefined);
  const url = process.env.REDIS_URL ?? servers!.env.redis!.url;
  const connection = new IORedis(url);
  const admin = new IORedis(url);
  // CALLGRIND_PID: that redis-server runs under valgrind --tool=callgrind; dump its counts per phase
  // (instructions: exact, whatever the load), see callgrindPhase
  const cg = process.env.CALLGRIND_PID;
  const phase = (name: string) => {
    if (cg) execFileSync('callgrind_control', ['-d', name, cg], { stdio: 'ignore' });
  };
  const store = new RedisTaskStore({ connection, prefix: 'prof' });
  try {
    await store.init();
    const news: NewTask[] = makeJobs(n, 42).map((j) => ({
      id: `t${j.i}`, idempotencyKey: null, type: 'bench', payload: { i: j.i, p: j.priority }, priority: j.priority,
      providerKey: 'bench', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null,
      maxAttempts: 5, idempotent: true,
    }));
    await admin.config('RESETSTAT');
    await serverCpu(admin);
    if (!cg) {
      await admin.config('SET', 'slowlog-max-len', '200000');
      await admin.config('SET', 'slowlog-log-slower-than', '0');
    }
    await admin.call('SLOWLOG', 'RESET');
    phase('setup');
    let t = nowMs();
    for (const c of chunks(news, 1000)) await store.create(c);
    phase('create');
    await admin.call('SLOWLOG', 'RESET');
    let s = await busy(admin);
    console.log(`create ${n} in 1000s: wall ${(nowMs() - t).toFixed(0)} ms, redis ${(s.usec / 1000).toFixed(0)} ms = ${(s.usec / n).toFixed(1)} µs/task, server CPU ${(s.cpu / n).toFixed(1)} µs/task; ${s.detail}`);
    const claimed: Task[] = [];
    t = nowMs();
    for (;;) {
      const r = await store.claimSubmissions({ owner: 'prof', limit: batch, leaseMs: 30_000 });
      if (r.claimed.length === 0) break;
      claimed.push(...r.claimed);
    }
    phase('claim');
    let ct = await callTimes(admin);
    s = await busy(admin);
    console.log(`claim per call of ${batch}: median ${ct.median} µs = ${(ct.median / batch).toFixed(2)} µs/task, lower quartile ${(ct.q1 / batch).toFixed(2)} µs/task (${ct.calls} calls)`);
    console.log(`claim in batches of ${batch}: wall ${(nowMs() - t).toFixed(0)} ms, redis ${(s.usec / 1000).toFixed(0)} ms = ${(s.usec / n).toFixed(1)} µs/task, server CPU ${(s.cpu / n).toFixed(1)} µs/task, ${(s.usec / s.calls).toFixed(0)} µs/script call; ${s.detail}`);
    t = nowMs();
    for (const c of chunks(claimed, batch)) {
      await Promise.all(c.map((task) => store.complete(fenceOf(task), { status: TaskStatus.SUCCEEDED, result: null })));
    }
    phase('complete');
    ct = await callTimes(admin);
    s = await busy(admin);
    console.log(`complete per call of ${batch}: median ${ct.median} µs = ${(ct.median / batch).toFixed(2)} µs/task, lower quartile ${(ct.q1 / batch).toFixed(2)} µs/task (${ct.calls} calls)`);
    console.log(`complete: wall ${(nowMs() - t).toFixed(0)} ms, redis ${(s.usec / 1000).toFixed(0)} ms = ${(s.usec / n).toFixed(1)} µs/task, server CPU ${(s.cpu / n).toFixed(1)} µs/task; ${s.detail}`);
    await admin.config('SET', 'slowlog-log-slower-than', '10000');
    if (cg) return;
    // the fixed cost of one script call: claims on the now empty queue, renewals of one lease
    const calls = 2000;
    for (let i = 0; i < calls; i++) await store.claimSubmissions({ owner: 'prof', limit: batch, leaseMs: 30_000 });
    s = await busy(admin);
    console.log(`claim on an empty queue: ${(s.usec / s.calls).toFixed(1)} µs/script call`);
    await store.create([{ ...news[0], id: 'renewed' }]);
    let held = (await store.claimSubmissions({ owner: 'prof', limit: 1, leaseMs: 30_000 })).claimed[0];
    await busy(admin);
    for (let i = 0; i < calls; i++) held = await store.renewLease(fenceOf(held), 30_000);
    s = await busy(admin);
    console.log(`renewLease: ${(s.usec / s.calls).toFixed(1)} µs/script call`);
  } finally {
    await store.close();
    connection.disconnect();
    admin.disconnect();
    await servers?.stop();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
