/**
 * A worker process of the multi-process scenario. Protocol over IPC:
 * parent -> start {target, env, namespace} -> child connects, replies ready
 * parent -> go -> child starts its worker, reports started job indexes in batches
 * parent -> stop -> child stops its worker, lets go of the namespace, exits.
 */
import './lib/peers'; // first: under --node=24 the runtime's peers serve require()
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createTarget } from './targets';
import type { BenchEnv, BenchTarget, Profile, RunningWorker } from './target';

export type ChildCommand =
  | { kind: 'start'; targetId: string; env: BenchEnv; namespace: string; concurrency: number; profile: Profile }
  | { kind: 'go' }
  | { kind: 'stop' };

export type ChildMessage = { kind: 'ready' } | { kind: 'started'; ids: number[] } | { kind: 'error'; message: string };

const send = (m: ChildMessage): void => {
  if (process.connected) process.send!(m);
};

let target: BenchTarget | null = null;
let worker: RunningWorker | null = null;
let concurrency = 16;
let profiler: Session | null = null;
let buffer: number[] = [];
const flush = (): void => {
  if (buffer.length) {
    send({ kind: 'started', ids: buffer });
    buffer = [];
  }
};
const flusher = setInterval(flush, 20);

async function onCommand(cmd: ChildCommand): Promise<void> {
  if (cmd.kind === 'start') {
    concurrency = cmd.concurrency;
    target = createTarget(cmd.targetId, cmd.env);
    await target.open({ attach: true });
    await target.begin(cmd.namespace, { attach: true, profile: cmd.profile });
    send({ kind: 'ready' });
  } else if (cmd.kind === 'go') {
    // CPU_PROF=<dir> (test/bench/profile/pg-multi-process.ts): a V8 CPU profile of this worker from go to stop
    if (process.env.CPU_PROF) {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
      await profiler.post('Profiler.start');
    }
    worker = await target!.startWorker({
      concurrency,
      purpose: 'throughput',
      handler: (job) => {
        buffer.push(job.i);
        if (buffer.length >= 500) flush();
      },
    });
  } else {
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(join(process.env.CPU_PROF!, `child-${process.pid}.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    await worker?.stop();
    flush();
    await target?.end({ detach: true });
    await target?.close();
    clearInterval(flusher);
    process.disconnect();
    setTimeout(() => process.exit(0), 100).unref();
  }
}

process.on('message', (cmd: ChildCommand) => {
  onCommand(cmd).catch((e) => {
    send({ kind: 'error', message: (e as Error)?.stack ?? String(e) });
    setTimeout(() => process.exit(1), 100);
  });
});
