import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkerProcessConfig } from './worker-process';

const ROOT = join(__dirname, '..', '..', '..');
const REGISTER = [join(ROOT, 'test', 'bench', 'register.js'), join(ROOT, 'test', 'support', 'register.js')].find(existsSync)!;

export interface WorkerChild {
  child: ChildProcess;
  auditPath: string;
  /** Ids whose handler started in this process (when reportStarts). */
  started: string[];
  stderr: () => string;
}

/** Forks one worker process (TypeScript through the swc require hook) and waits until it runs. */
export async function startWorkerProcess(cfg: WorkerProcessConfig): Promise<WorkerChild> {
  const child = fork(join(__dirname, 'worker-process.ts'), [], {
    execArgv: ['-r', REGISTER],
    env: { ...process.env, PQ_WORKER: JSON.stringify(cfg) },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let err = '';
  child.stderr?.on('data', (d) => (err = (err + d).slice(-20_000)));
  const w: WorkerChild = { child, auditPath: cfg.auditPath, started: [], stderr: () => err };
  child.on('message', (m: { kind?: string; id?: string }) => {
    if (m?.kind === 'started' && m.id) w.started.push(m.id);
  });
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`worker exited with ${code} before ready:\n${err}`));
    child.once('exit', onExit);
    child.on('message', (m: { kind?: string }) => {
      if (m?.kind === 'ready') {
        child.off('exit', onExit);
        resolve();
      }
    });
  });
  return w;
}

/** Graceful stop through IPC (SIGKILL after timeoutMs). */
export async function stopWorkerProcess(w: WorkerChild, timeoutMs = 15_000): Promise<void> {
  const { child } = w;
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.send({ kind: 'stop' });
  });
}

export function killWorkerProcess(w: WorkerChild): Promise<void> {
  return new Promise((resolve) => {
    if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
    w.child.once('exit', () => resolve());
    w.child.kill('SIGKILL');
  });
}

export interface AuditLine {
  kind: 'S' | 'F' | 'X' | 'H';
  id: string;
  /** Store time (S, F); local start time of the handler (H). */
  time: number;
  /** Local end time of the handler (H). */
  end?: number;
  status?: string;
  worker: number;
}

export function readAudit(paths: readonly string[]): AuditLine[] {
  const out: AuditLine[] = [];
  paths.forEach((p, worker) => {
    if (!existsSync(p)) return;
    for (const line of readFileSync(p, 'utf8').split('\n')) {
      if (!line) continue;
      const [kind, id, a, b] = line.split(' ');
      if (kind === 'S') out.push({ kind, id, time: Number(a), worker });
      else if (kind === 'F') out.push({ kind, id, time: Number(a), status: b, worker });
      else if (kind === 'H') out.push({ kind, id, time: Number(a), end: Number(b), worker });
      else out.push({ kind: 'X', id, time: NaN, status: `${a}->${b}`, worker });
    }
  });
  return out;
}
