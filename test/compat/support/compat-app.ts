import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Combination } from '../matrix';
import { stepsFor, stepsIndexSource } from '../steps';
import { cacheKey, cached, evictStale, filesUnder, hashOfFiles } from './cache';
import { prebuildInstallRc, sqlitePrebuilds, type Prebuilds } from './native-prebuilds';
import type { Runtime } from './node-runtime';
import { CompatFailure, run, runOrFail, type RunResult } from './run';
import type { PackedLibrary } from './tarball';

const TEMPLATE = join(__dirname, '..', 'app');
/** Bump when the generated package.json changes shape (it is part of the install cache key). */
const APP_LAYOUT = 2;
const RESULT_MARKER = 'PQ-COMPAT-RESULT ';
/** File of a cached install naming the Node.js version whose npm ran its install scripts. */
const INSTALLED_BY = '.installed-by';

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
  /**
   * Milliseconds per step: the better-sqlite3 prebuilt (cached per ABI), the `npm install` of the
   * pins (0 when cached, or installed under another Node.js line), the `npm rebuild` under this
   * line (0 when cached or not needed), the copy into the app's directory, the `npm install` that
   * swaps in this run's tarball (0 when the cached install already holds it: `refreshed` false),
   * then the TypeScript compile (0 when another line's compile of the same app was taken:
   * `compiled` false) and the app's run.
   */
  timings: {
    installMs: number;
    installCached: boolean;
    prebuildMs: number;
    baseInstallMs: number;
    /** The Node.js line whose npm installed the pins (this one, or another whose tree was copied and rebuilt). */
    installedBy: string;
    rebuildMs: number;
    copyMs: number;
    refreshed: boolean;
    refreshMs: number;
    /** false: the output of this app's compile by an earlier test on another Node.js line (compileMs 0). */
    compiled: boolean;
    compileMs: number;
    runMs: number;
  };
}

/** Hash of the app template's sources (test/compat/app/src), for the key of its compiled output. */
function templateHash(): string {
  return hashOfFiles(filesUnder(join(TEMPLATE, 'src')), TEMPLATE);
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
 * with its own TypeScript, then run. The install is cached by pins, and per Node.js version after
 * its install scripts ran under it (see runAll); the cached tree is copied, and when the
 * library's sources changed since it was made, `npm install` runs again and only swaps in the new
 * tarball.
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

  /** The pins of this app's install cache key. */
  private get pins() {
    const c = this.combination;
    return { deps: c.dependencies, overrides: c.overrides, type: c.moduleType, layout: APP_LAYOUT };
  }

  /**
   * The install of the pins (cached; the first Node.js line that needs it makes it), and the
   * better-sqlite3 prebuilt it takes. A matrix starts these for all its apps at once (prefetch)
   * while its tests run one app after another: the installs wait on the network, not the CPU.
   */
  private async baseInstall(): Promise<{ installed: { dir: string; hit: boolean }; prebuilds: Prebuilds | null; prebuildMs: number; baseInstallMs: number }> {
    const c = this.combination;
    const rt = this.runtime;
    const started = Date.now();
    const sqlite = c.dependencies['better-sqlite3'];
    const prebuilds = sqlite ? await sqlitePrebuilds(rt, sqlite) : null;
    const prebuildMs = Date.now() - started;
    const manifest = packageJson(c, this.lib);
    let baseInstallMs = 0;
    const installed = await cached(`app-${c.id}-${cacheKey(this.pins)}`, async (tmp) => {
      writeFileSync(join(tmp, 'package.json'), manifest);
      if (prebuilds) writeFileSync(join(tmp, '.prebuild-installrc'), prebuildInstallRc(prebuilds));
      const install = await runOrFail(this.what, 'npm install (first, cached afterwards)', rt.npm[0], [rt.npm[1], 'install'], { cwd: tmp, env: rt.env, timeoutMs: 15 * 60_000 });
      baseInstallMs = install.ms;
      this.checkPrebuiltTaken(tmp, prebuilds, 'npm install (first, cached afterwards)', install);
      writeFileSync(join(tmp, INSTALLED_BY), rt.version);
    });
    return { installed, prebuilds, prebuildMs, baseInstallMs };
  }

  /**
   * Starts baseInstall() without waiting for it; a failure is left to the test of this app, whose
   * runAll() makes the same cached install (the cache's lock makes the two one install).
   */
  prefetch(): void {
    this.baseInstall().catch(() => undefined);
  }

  async runAll(env: NodeJS.ProcessEnv): Promise<AppRun> {
    const c = this.combination;
    const rt = this.runtime;
    const installStarted = Date.now();
    const pins = this.pins;
    const manifest = packageJson(c, this.lib);
    // the pins are installed once, by the first Node.js line that needs them; the other lines copy
    // that tree and run its install scripts again under their own Node.js (`npm rebuild`), which
    // is what an install under them adds: the resolved tree does not depend on the Node.js running
    // npm (the same npm for all), only the native binaries do (better-sqlite3's prebuilt per ABI)
    const { installed, prebuilds, prebuildMs, baseInstallMs } = await this.baseInstall();
    let rebuildMs = 0;
    const installedBy = readFileSync(join(installed.dir, INSTALLED_BY), 'utf8');
    const base =
      installedBy === rt.version
        ? installed
        : await cached(`app-${c.id}-node${rt.version}-${cacheKey({ ...pins, node: rt.version })}`, async (tmp) => {
            await runOrFail(this.what, 'copy of the installed pins', 'cp', ['-a', `${installed.dir}/.`, tmp], { cwd: tmp });
            if (prebuilds) writeFileSync(join(tmp, '.prebuild-installrc'), prebuildInstallRc(prebuilds));
            const rebuild = await runOrFail(this.what, `npm rebuild (install scripts under Node.js ${rt.version})`, rt.npm[0], [rt.npm[1], 'rebuild'], {
              cwd: tmp,
              env: rt.env,
              timeoutMs: 15 * 60_000,
            });
            rebuildMs = rebuild.ms;
            this.checkPrebuiltTaken(tmp, prebuilds, 'npm rebuild', rebuild);
            writeFileSync(join(tmp, INSTALLED_BY), rt.version);
          });
    const dir = mkdtempSync(join(tmpdir(), `pq-compat-${c.id}-`));
    this.dir = dir;
    const copy = await runOrFail(this.what, 'copy of the cached install', 'cp', ['-a', `${base.dir}/.`, dir], { cwd: dir });
    // the cached install was made from this very tarball (its name carries the source hash) when
    // it was built by this run or by an earlier one on the same sources: nothing to swap in
    const refreshed = readFileSync(join(dir, 'package.json'), 'utf8') !== manifest;
    let refreshMs = 0;
    if (refreshed) {
      writeFileSync(join(dir, 'package.json'), manifest);
      refreshMs = (await runOrFail(this.what, 'npm install', rt.npm[0], [rt.npm[1], 'install'], { cwd: dir, env: rt.env, timeoutMs: 10 * 60_000 })).ms;
    }
    const installMs = Date.now() - installStarted;

    cpSync(join(TEMPLATE, 'src'), join(dir, 'src'), { recursive: true });
    const stepsIndex = stepsIndexSource(stepsFor(c));
    writeFileSync(join(dir, 'src', 'steps', 'index.ts'), stepsIndex);
    writeFileSync(join(dir, 'tsconfig.json'), tsconfig(c));
    // tsc's verdict and output depend on the sources, the pinned packages (TypeScript and
    // @types/node among them) and the library's tarball, not on the Node.js running it: each app
    // compiles once per library state, and runs from that output under every Node.js line
    const distKey = cacheKey({ ...pins, lib: basename(this.lib.tarball), template: templateHash(), steps: stepsIndex, tsconfig: tsconfig(c) });
    const distName = `dist-${c.id}-${distKey}`;
    let compileMs = 0;
    const compiled = await cached(distName, async (tmp) => {
      const r = await runOrFail(this.what, 'TypeScript compile (skipLibCheck: false)', rt.node, ['node_modules/typescript/bin/tsc', '-p', '.'], {
        cwd: dir,
        env: rt.env,
        timeoutMs: 5 * 60_000,
      });
      compileMs = r.ms;
      cpSync(join(dir, 'dist'), join(tmp, 'dist'), { recursive: true });
    });
    if (compiled.hit) cpSync(join(compiled.dir, 'dist'), join(dir, 'dist'), { recursive: true });
    evictStale(`dist-${c.id}-`, 24 * 3600_000, distName);

    const app = await run(rt.node, ['dist/main.js'], { cwd: dir, env: { ...rt.env, ...env }, timeoutMs: 5 * 60_000 });
    const parsed = this.parse(app);
    return {
      what: this.what,
      node: rt.version,
      versions: parsed.versions,
      results: parsed.results,
      timings: {
        installMs,
        installCached: base.hit,
        prebuildMs,
        baseInstallMs,
        installedBy,
        rebuildMs,
        copyMs: copy.ms,
        refreshed,
        refreshMs,
        compiled: !compiled.hit,
        compileMs,
        runMs: app.ms,
      },
    };
  }

  /** A compile of better-sqlite3 means its prebuilt was not taken: every cold run would pay minutes per app. */
  private checkPrebuiltTaken(dir: string, prebuilds: Prebuilds | null, phase: string, result: RunResult): void {
    if (prebuilds && existsSync(join(dir, 'node_modules', 'better-sqlite3', 'build', 'Release', 'obj.target'))) {
      throw new CompatFailure(this.what, phase, phase.split(' (')[0], result, `better-sqlite3 was compiled instead of unpacked from ${prebuilds.dir}`);
    }
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
