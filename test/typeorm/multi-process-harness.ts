import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { AuditEvent, ChildConfig } from './fixtures/worker-child';

const ROOT = join(__dirname, '..', '..');

/** A worker child process and the audit events it sent. */
export class WorkerChild {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  private output = '';
  exited = false;

  constructor(
    cfg: ChildConfig,
    onEvent: (e: AuditEvent) => void,
  ) {
    this.proc = fork(join(__dirname, 'fixtures', 'worker-child.ts'), [], {
      cwd: ROOT,
      execArgv: ['-r', join(ROOT, 'test', 'support', 'register.js')],
      env: { ...process.env, PQ_CHILD: JSON.stringify(cfg) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.proc.stdout?.on('data', (d) => (this.output = (this.output + d).slice(-4000)));
    this.proc.stderr?.on('data', (d) => (this.output = (this.output + d).slice(-4000)));
    this.proc.on('exit', () => (this.exited = true));
    this.ready = new Promise((resolve, reject) => {
      this.proc.on('message', (m: AuditEvent | { e: string }) => {
        if (m.e === 's' || m.e === 'f') onEvent(m as AuditEvent);
        else if (m.e === 'ready') resolve();
      });
      this.proc.on('exit', (code) => reject(new Error(`worker child exited (${code}) before ready:\n${this.output}`)));
    });
  }

  get log(): string {
    return this.output;
  }

  /** Graceful stop (the worker finishes what runs), then exit. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.send({ cmd: 'stop' });
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 20_000);
    await done;
    clearTimeout(t);
  }

  async kill(): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.kill('SIGKILL');
    await done;
  }
}

export interface LimitSpec {
  accountConcurrency: Record<string, number>; // accountKey "provider/account" -> limit
  tenantQuota: Record<string, number>;
  defaultTenantQuota: number | null;
  ckeyLimit: Record<string, number>; // default 1
}

/**
 * Replays the audit log: at no instant may more handlers of one account / tenant /
 * concurrency key run than its limit. A handler runs strictly inside the store's slot
 * (claim .. complete), so this is a lower bound of the store's own count. At equal times
 * finishes go first.
 */
export function maxOverLimit(events: readonly AuditEvent[], spec: LimitSpec): string[] {
  const sorted = [...events].sort((a, b) => a.t - b.t || (a.e === b.e ? 0 : a.e === 'f' ? -1 : 1));
  const live = new Map<string, AuditEvent[]>();
  const lastFinish = new Map<string, AuditEvent>();
  const problems: string[] = [];
  // a problem names the handlers running at that instant and the key's last finish, so a
  // failure says whether it is an overlap of microseconds across processes or a real one
  const show = (e: AuditEvent) => `${e.id}@${e.pid} t=${e.t.toFixed(3)} claimAt=${e.claimAt} attempts=${e.attempts}`;
  for (const ev of sorted) {
    const keys: Array<[string, number | null]> = [];
    if (ev.account !== null) keys.push([`a:${ev.provider}/${ev.account}`, spec.accountConcurrency[`${ev.provider}/${ev.account}`] ?? null]);
    if (ev.tenant !== null) keys.push([`t:${ev.tenant}`, spec.tenantQuota[ev.tenant] ?? spec.defaultTenantQuota]);
    if (ev.ckey !== null) keys.push([`c:${ev.ckey}`, spec.ckeyLimit[ev.ckey] ?? 1]);
    for (const [k, limit] of keys) {
      const running = live.get(k) ?? [];
      live.set(k, running);
      if (ev.e === 'f') {
        const i = running.findIndex((r) => r.id === ev.id && r.pid === ev.pid);
        if (i >= 0) running.splice(i, 1);
        lastFinish.set(k, ev);
        continue;
      }
      running.push(ev);
      if (limit !== null && running.length > limit) {
        const last = lastFinish.get(k);
        problems.push(
          `${k}: ${running.length} running > limit ${limit} at ${ev.t.toFixed(3)} [${running.map(show).join('; ')}]` +
            (last ? ` last finish ${show(last)}` : ''),
        );
      }
    }
  }
  return problems;
}

/**
 * GCRA bound of a provider rate: any k consecutive claims (by store claim time) satisfy
 * k <= burst + qps * (last - first) / 1000.
 */
export function rateViolations(claimTimes: readonly number[], qps: number, burst: number): string[] {
  const c = [...claimTimes].sort((a, b) => a - b);
  const problems: string[] = [];
  let best = -Infinity; // max over i of (qps*c_i/1000 - i)
  for (let j = 0; j < c.length; j++) {
    best = Math.max(best, (qps * c[j]) / 1000 - j);
    const worst = j + 1 - (qps * c[j]) / 1000 + best; // largest k - qps*span/1000 ending at j
    if (worst > burst + 1e-6) problems.push(`claim #${j} at ${c[j]}: ${worst.toFixed(3)} above burst ${burst}`);
  }
  return problems;
}
