/**
 * Where does a Redis drain spend its time? Runs the drain scenario for one Redis target and
 * prints Redis' own per-command statistics (calls, µs per call) for the drain phase.
 * `node -r ./test/support/register.js test/bench/profile/redis-drain.ts [ours-redis|bullmq] [tasks]`
 * Set PROFILE_OUT=file.cpuprofile for a CPU profile of the client side during the drain only.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import IORedis from 'ioredis';
import { startServers } from '../lib/servers';
import { createTarget } from '../targets';
import { makeJobs, submitAll } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';

async function main(): Promise<void> {
  const id = process.argv[2] ?? 'ours-redis';
  const n = Number(process.argv[3] ?? 20_000);
  const servers = await startServers(new Set(['redis']), () => undefined);
  const target = createTarget(id, servers.env);
  const admin = new IORedis(servers.env.redis!.url);
  try {
    await target.open();
    await target.begin('prof');
    await submitAll(target, makeJobs(n, 42), 1000);
    await admin.config('RESETSTAT');
    const cpuBefore = serverCpu(await admin.info('cpu'));
    const done = new Countdown(n, 120_000, 'drain');
    const out = process.env.PROFILE_OUT;
    const session = out ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const t0 = nowMs();
    const w = await target.startWorker({ concurrency: 16, purpose: 'throughput', handler: () => done.tick() });
    await done.arm();
    const elapsed = nowMs() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(out!, JSON.stringify(profile));
      session.disconnect();
    }
    await w.stop();
    const stats = (await admin.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat_'));
    const serverUs = serverCpu(await admin.info('cpu')) - cpuBefore;
    console.log(`${id}: ${n} tasks in ${elapsed.toFixed(0)} ms = ${perSecond(n, elapsed).toFixed(0)} jobs/s`);
    console.log(`client CPU: user ${(cpu.user / 1000).toFixed(0)} ms, system ${(cpu.system / 1000).toFixed(0)} ms`);
    let total = 0;
    const rows = stats.map((l) => {
      const [name, rest] = l.split(':');
      const f = Object.fromEntries(rest.trim().split(',').map((kv) => kv.split('=')));
      total += Number(f.usec);
      return { cmd: name.replace('cmdstat_', ''), calls: Number(f.calls), usec: Number(f.usec), perCall: Number(f.usec_per_call) };
    });
    rows.sort((a, b) => b.usec - a.usec);
    for (const r of rows.slice(0, 12)) {
      console.log(`  ${r.cmd.padEnd(16)} calls ${String(r.calls).padStart(7)}  total ${(r.usec / 1000).toFixed(0).padStart(6)} ms  ${r.perCall.toFixed(1).padStart(7)} µs/call  ${(r.calls / n).toFixed(2)} calls/task`);
    }
    console.log(`  redis busy ${(total / 1000).toFixed(0)} ms of ${elapsed.toFixed(0)} ms wall; redis-server CPU during the drain ${(serverUs / 1000).toFixed(0)} ms = ${(serverUs / n).toFixed(1)} µs/task`);
  } finally {
    await target.end().catch(() => undefined);
    await target.close();
    admin.disconnect();
    await servers.stop();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});

/** redis-server used_cpu (user + system) in µs from INFO cpu. */
function serverCpu(info: string): number {
  const v = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)![1]);
  return (v('used_cpu_user') + v('used_cpu_sys')) * 1e6;
}
