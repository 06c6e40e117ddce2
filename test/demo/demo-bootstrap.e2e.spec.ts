import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDemoConfig } from '../../apps/demo/src/config/load-demo-config';
import { RECOMMENDED_REDIS_OPTIONS } from '../../apps/demo/src/store/store-connection';
import { freePort } from '../support/servers/common';

const root = join(__dirname, '..', '..');

/** The real demo process (`npm start`'s entry point) with this environment; output collected. */
function startDemoProcess(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const base = { ...process.env };
  delete base.DEMO_ADMIN_KEY;
  const child = spawn(process.execPath, ['-r', './test/support/register.js', 'apps/demo/src/main.ts'], {
    cwd: root,
    env: { ...base, NO_COLOR: '1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function outputMatching(p: { output: () => string; exited: Promise<number | null> }, re: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void p.exited.then(() => (done = true));
  for (;;) {
    const m = re.exec(p.output());
    if (m) return m;
    if (done || Date.now() > deadline) throw new Error(`no ${re} in the demo's output:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('demo start-up (the real process)', () => {
  it('without DEMO_ADMIN_KEY it generates a random admin key, prints it once, and accepts only it', async () => {
    const demo = startDemoProcess({});
    try {
      const [, url] = await outputMatching(demo, /listening on (http:\/\/\S+) /);
      const [, key] = await outputMatching(demo, /admin routes: x-admin-key: ([0-9a-f]{32}) \(generated/);
      expect(demo.output().split(key).length - 1).toBe(1);
      for (const wrong of ['admin-key', key.slice(0, -1), '']) {
        expect((await fetch(`${url}/admin/limits`, { headers: { 'x-admin-key': wrong } })).status).toBe(401);
      }
      expect((await fetch(`${url}/admin/limits`, { headers: { 'x-admin-key': key } })).status).toBe(200);
    } finally {
      demo.child.kill('SIGTERM');
      expect(await demo.exited).toBe(0);
    }
  });

  it('a generated admin key is random per start and a configured one is used as given', () => {
    const keys = new Set(Array.from({ length: 20 }, () => loadDemoConfig({}).adminKey));
    expect(keys.size).toBe(20);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(loadDemoConfig({ DEMO_ADMIN_KEY: 'chosen-by-ops' })).toMatchObject({ adminKey: 'chosen-by-ops', adminKeyGenerated: false });
    expect(loadDemoConfig({ DEMO_ADMIN_KEY: ' ' }).adminKeyGenerated).toBe(true);
  });

  it('with PQ_STORE=redis and Redis down it exits 1 with a message that says what to do, not an unhandled error', async () => {
    const port = await freePort(); // nothing listens there
    const demo = startDemoProcess({ PQ_STORE: 'redis', PQ_REDIS_URL: `redis://127.0.0.1:${port}`, PQ_REDIS_CONNECT_TIMEOUT_MS: '1000' });
    const code = await demo.exited;
    const out = demo.output();
    expect({ code, out }).toEqual({ code: 1, out: expect.stringContaining(`cannot start: Redis at redis://127.0.0.1:${port} is not reachable (connect ECONNREFUSED`) });
    expect(out).toContain('start Redis there, or point PQ_REDIS_URL at one');
    expect(out).toContain(`waiting for Redis at redis://127.0.0.1:${port} (up to 1000 ms)`);
    expect(out).not.toMatch(/Connection is closed|Unhandled|node:internal/);
  });

  it("opens Redis with the options docs/REDIS.md recommends", () => {
    const doc = readFileSync(join(root, 'docs', 'REDIS.md'), 'utf8');
    const recommended = /new Redis\([^,]+,\s*(\{[^}]*\})\)/.exec(doc);
    expect(recommended).not.toBeNull();
    expect(RECOMMENDED_REDIS_OPTIONS).toEqual(new Function(`return ${recommended![1]}`)());
  });
});
