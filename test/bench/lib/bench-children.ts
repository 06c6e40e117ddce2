import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ChildCommand, ChildMessage } from '../child';

const REGISTER = join(__dirname, '..', '..', 'support', 'register.js');
const CHILD = join(__dirname, '..', 'child.ts');

/**
 * Forks a worker process of the multi-process drain (test/bench/child.ts) and sends it `start`.
 * `ready` resolves when it is connected; it rejects if the child reports an error or exits first.
 * `onStarted` gets the job indexes it reports, `onError` a failure it reports later.
 */
export function forkBenchChild(
  start: Extract<ChildCommand, { kind: 'start' }>,
  onStarted: (ids: number[]) => void,
  onError: (e: Error) => void = () => undefined,
): { child: ChildProcess; ready: Promise<void> } {
  const child = fork(CHILD, [], { execArgv: ['-r', REGISTER], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: ChildMessage) => {
      if (m.kind === 'ready') resolve();
      else if (m.kind === 'started') onStarted(m.ids);
      else if (m.kind === 'error') {
        const e = new Error(`worker process: ${m.message}`);
        reject(e);
        onError(e);
      }
    });
    child.once('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
  });
  child.send(start);
  return { child, ready };
}

/** Asks a bench child to stop (SIGKILL after 20 s) and waits for its exit. */
export function stopBenchChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.connected) child.send({ kind: 'stop' } satisfies ChildCommand);
    else child.kill('SIGTERM');
  });
}
