import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  output: string;
  ms: number;
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs a command, collecting stdout and stderr interleaved; never throws for a non-zero exit. */
export function run(command: string, args: string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          chunks.push(Buffer.from(`\n[killed after ${opts.timeoutMs} ms]\n`));
          child.kill('SIGKILL');
        }, opts.timeoutMs)
      : null;
    child.once('error', reject);
    child.once('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - started });
    });
  });
}

/** The last `lines` lines of a command's output, for a failure message. */
export function tail(output: string, lines = 40): string {
  const all = output.trimEnd().split('\n');
  return (all.length > lines ? [`... (${all.length - lines} lines before)`] : []).concat(all.slice(-lines)).join('\n');
}

/**
 * A failure of one phase of one combination, with what a reader needs: which combination and
 * phase, the command, its exit code and the end of its output.
 */
export class CompatFailure extends Error {
  constructor(what: string, phase: string, command: string, result: RunResult | null, reason?: string) {
    super(
      [
        `${what}: ${phase} failed${reason ? `: ${reason}` : ''}`,
        `  command: ${command}`,
        result ? `  exit code ${result.code} after ${result.ms} ms; output (end):\n${tail(result.output).replace(/^/gm, '    ')}` : '',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    this.name = 'CompatFailure';
  }
}

/** Runs a command and throws a CompatFailure when it exits non-zero. */
export async function runOrFail(what: string, phase: string, command: string, args: string[], opts: RunOptions): Promise<RunResult> {
  const r = await run(command, args, opts);
  if (r.code !== 0) throw new CompatFailure(what, phase, [command, ...args].join(' '), r);
  return r;
}
