import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Combination } from '../matrix';
import { stepsFor, stepsIndexSource } from '../steps';
import { cacheKey, cached } from './cache';
import { prebuildInstallRc, sqlitePrebuilds } from './native-prebuilds';
import type { Runtime } from './node-runtime';
import { CompatFailure, run, runOrFail, type RunResult } from './run';
import type { PackedLibrary } from './tarball';

const TEMPLATE = join(__dirname, '..', 'app');
/** Bump when the generated package.json changes shape (it is part of the install cache key). */
const APP_LAYOUT = 2;
const RESULT_MARKER = 'PQ-COMPAT-RESULT ';

export interface StepResult {
  store: string;
  step: string;
  ok: boolean;
  ms: number;
  detail?: string;
}

export interface AppRun {
  what: string;
  node: string;
  versions: Record<string, string | null>;
  results: StepResult[];
  timings: { installMs: number; installCached: boolean; compileMs: number; runMs: number };
}

function packageJson(c: Combination, lib: PackedLibrary): string {
  return `${JSON.stringify(
    {
      name: `pq-compat-${c.id}`,
      version: '0.0.0',
      private: true,
      type: c.moduleType,
      dependencies: { ...c.dependencies, 'nestjs-priority-queue': `file:${lib.tarball}` },
      ...(c.overrides ? { overrides: c.overrides } : {}),
    },
    null,
    2,
  )}\n`;
}

function tsconfig(c: Combination): string {
  const module = c.resolution === 'node10' ? { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true } : { module: 'nodenext', moduleResolution: 'nodenext' };
  return `${JSON.stringify(
    {
      compilerOptions: {
        ...module,
        target: 'es2022',
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        // the library's published types must compile as they are, without the optional peers
        skipLibCheck: false,
        rootDir: 'src',
        outDir: 'dist',
        types: ['node'],
      },
      files: ['src/main.ts'],
    },
    null,
    2,
  )}\n`;
}

/**
 * One app of the matrix under one Node.js: generated from test/compat/app, the packed library
 * installed with a plain `npm install` next to the combination's pinned dependencies, compiled
 * with its own TypeScript, then run. The install is cached by pins and Node.js version (the
 * cached tree is copied and `npm install` run again, which only swaps in the new tarball).
 * better-sqlite3's install script finds its binary prebuilt once per Node.js ABI
 * (support/native-prebuilds.ts) instead of compiling SQLite in every app.
 */
export class CompatApp {
  readonly what: string;
  private dir: string | null = null;

  constructor(
    private readonly combination: Combination,
    private readonly runtime: Runtime,
    private readonly lib: PackedLibrary,
  ) {
    this.what = `[${combination.title}] on ${runtime.label}`;
  }

  async runAll(env: NodeJS.ProcessEnv): Promise<AppRun> {
    const c = this.combination;
    const rt = this.runtime;
    const installStarted = Date.now();
    const key = cacheKey({ deps: c.dependencies, overrides: c.overrides, type: c.moduleType, node: rt.version, layout: APP_LAYOUT });
    const sqlite = c.dependencies['better-sqlite3'];
    const prebuilds = sqlite ? await sqlitePrebuilds(rt, sqlite) : null;
    const base = await cached(`app-${c.id}-node${rt.version}-${key}`, async (tmp) => {
      writeFileSync(join(tmp, 'package.json'), packageJson(c, this.lib));
      if (prebuilds) writeFileSync(join(tmp, '.prebuild-installrc'), prebuildInstallRc(prebuilds));
      const install = await runOrFail(this.what, 'npm install (first, cached afterwards)', rt.npm[0], [rt.npm[1], 'install'], { cwd: tmp, env: rt.env, timeoutMs: 15 * 60_000 });
      // a compile here means the prebuilt was not taken: every cold run would pay minutes per app
      if (prebuilds && existsSync(join(tmp, 'node_modules', 'better-sqlite3', 'build', 'Release', 'obj.target'))) {
        throw new CompatFailure(this.what, 'npm install (first, cached afterwards)', 'npm install', install, `better-sqlite3 was compiled instead of unpacked from ${prebuilds.dir}`);
      }
    });
    const dir = mkdtempSync(join(tmpdir(), `pq-compat-${c.id}-`));
    this.dir = dir;
    await runOrFail(this.what, 'copy of the cached install', 'cp', ['-a', `${base.dir}/.`, dir], { cwd: dir });
    writeFileSync(join(dir, 'package.json'), packageJson(c, this.lib));
    await runOrFail(this.what, 'npm install', rt.npm[0], [rt.npm[1], 'install'], { cwd: dir, env: rt.env, timeoutMs: 10 * 60_000 });
    const installMs = Date.now() - installStarted;

    cpSync(join(TEMPLATE, 'src'), join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'steps', 'index.ts'), stepsIndexSource(stepsFor(c)));
    writeFileSync(join(dir, 'tsconfig.json'), tsconfig(c));
    const compile = await runOrFail(this.what, 'TypeScript compile (skipLibCheck: false)', rt.node, ['node_modules/typescript/bin/tsc', '-p', '.'], {
      cwd: dir,
      env: rt.env,
      timeoutMs: 5 * 60_000,
    });

    const app = await run(rt.node, ['dist/main.js'], { cwd: dir, env: { ...rt.env, ...env }, timeoutMs: 5 * 60_000 });
    const parsed = this.parse(app);
    return { what: this.what, node: rt.version, versions: parsed.versions, results: parsed.results, timings: { installMs, installCached: base.hit, compileMs: compile.ms, runMs: app.ms } };
  }

  private parse(app: RunResult): { versions: Record<string, string | null>; results: StepResult[] } {
    const line = app.output.split('\n').find((l) => l.startsWith(RESULT_MARKER));
    if (!line) throw new CompatFailure(this.what, 'running the app', 'node dist/main.js', app, 'it printed no result line');
    const parsed = JSON.parse(line.slice(RESULT_MARKER.length)) as { versions: Record<string, string | null>; results: StepResult[] };
    const failed = parsed.results.filter((r) => !r.ok);
    if (failed.length || app.code !== 0) {
      const why = failed.map((f) => `${f.store} store, step "${f.step}": ${(f.detail ?? '').split('\n').slice(0, 6).join('\n    ')}`).join('\n  ');
      const rest = { ...app, output: app.output.split('\n').filter((l) => !l.startsWith(RESULT_MARKER)).join('\n') };
      throw new CompatFailure(this.what, 'running the app', 'node dist/main.js', rest, why ? `\n  ${why}` : `exit code ${app.code}`);
    }
    return parsed;
  }

  /** The versions npm actually installed, from the app's lockfile. */
  installedVersion(pkg: string): string | null {
    if (!this.dir) return null;
    const lock = JSON.parse(readFileSync(join(this.dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    return lock.packages[`node_modules/${pkg}`]?.version ?? null;
  }

  /** Removes the app's directory, unless PQ_COMPAT_KEEP is set (to look into a failure). */
  dispose(): void {
    if (this.dir && !process.env.PQ_COMPAT_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }
}
