import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';
import { COMBINATIONS, NEXT_DRIVERS, NODE_RUNTIMES } from './matrix';
import { packLibrary, REPO_ROOT, type PackedLibrary } from './support/tarball';

// semver comes with npm's own tooling in node_modules; a local type keeps it dependency-free
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as { satisfies(v: string, range: string): boolean };

/** Where the repository is published; the package README links there (package.json repository). */
const REPO_URL = 'https://github.com/nestjs-priority-queue/nestjs-priority-queue';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

interface PackageJson {
  name: string;
  license: string;
  keywords: string[];
  repository: { type: string; url: string; directory: string };
  sideEffects: boolean;
  files: string[];
  engines: { node: string };
  main: string;
  types: string;
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

/** Names a class declares as public methods, or an interface as properties, in a .d.ts. */
function membersOf(dts: string, name: string): string[] {
  const sf = ts.createSourceFile(dts, readFileSync(dts, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n)) && n.name?.text === name) {
      for (const m of n.members) {
        const mods = ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : [];
        if (mods.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword)) continue;
        if (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) out.push(m.name.text);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return [...new Set(out)];
}

/** Every name an entry point's .d.ts exports (following `export ... from` chains). */
function exportedNames(dts: string): string[] {
  const program = ts.createProgram([dts], { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(dts)!;
  return checker.getExportsOfModule(checker.getSymbolAtLocation(sf)!).map((s) => s.name);
}

/**
 * Types the public API names that no entry point exports: walks, from every export of the entry
 * points, the public members of each class, interface and type alias declared in the package
 * (constructors aside: Nest builds the injectables; members marked `@internal` aside: the
 * library's own plumbing), and every type they name in turn. A user who gets such a value
 * (TaskManager.explain's result, a store option) could not name its type otherwise.
 */
function unexportedPublicTypes(entries: string[], packageDir: string): string[] {
  const program = ts.createProgram(entries, { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const inPackage = (d: ts.Declaration) => {
    const f = d.getSourceFile().fileName;
    return f.startsWith(packageDir) && !f.includes('node_modules');
  };
  const exported = new Set<ts.Symbol>();
  for (const e of entries) for (const s of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(e)!)!)) exported.add(resolve(s));
  const seen = new Set<ts.Symbol>();
  const missing = new Set<string>();
  const via = new Map<ts.Symbol, string>();
  const queue = [...exported];
  let from = '';
  const isPublic = (m: ts.Node) => {
    const mods = ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : [];
    if (mods.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword)) return false;
    return !ts.isConstructorDeclaration(m) && !ts.getJSDocTags(m).some((t) => t.tagName.text === 'internal');
  };
  // TaskStatus.SUCCEEDED and the like: reached through their exported namespace
  const inExportedNamespace = (d: ts.Declaration) => {
    const ns = ts.findAncestor(d.parent, ts.isModuleDeclaration);
    const sym = ns && checker.getSymbolAtLocation(ns.name);
    return !!sym && exported.has(resolve(sym));
  };
  const refsIn = (n: ts.Node): void => {
    if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n) || ts.isTypeQueryNode(n)) {
      const name = ts.isTypeReferenceNode(n) ? n.typeName : ts.isTypeQueryNode(n) ? n.exprName : n.expression;
      const sym = checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name);
      if (sym) {
        const r = resolve(sym);
        if (!via.has(r)) via.set(r, from);
        queue.push(r);
      }
    }
    ts.forEachChild(n, refsIn);
  };
  while (queue.length) {
    const s = queue.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    const decls = (s.declarations ?? []).filter(inPackage);
    if (decls.length === 0 || decls.some((d) => ts.isTypeParameterDeclaration(d))) continue;
    if (!exported.has(s) && !decls.some(inExportedNamespace) && decls.some((d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isClassDeclaration(d) || ts.isEnumDeclaration(d))) {
      missing.add(`${s.name} (${relative(packageDir, decls[0].getSourceFile().fileName)}, named by ${via.get(s)})`);
    }
    for (const d of decls) {
      if (ts.isClassDeclaration(d) || ts.isInterfaceDeclaration(d)) {
        from = s.name;
        d.heritageClauses?.forEach(refsIn);
        for (const m of d.members) {
          from = `${s.name}.${m.name?.getText() ?? '[]'}`;
          if (isPublic(m)) refsIn(m);
        }
      } else if (ts.isTypeAliasDeclaration(d) || ts.isFunctionDeclaration(d) || ts.isVariableDeclaration(d)) {
        from = s.name;
        refsIn(d);
      }
    }
  }
  return [...missing].sort();
}

describe('the npm package (packed as npm publish would)', () => {
  let lib: PackedLibrary;
  let pkg: PackageJson;
  let files: string[];
  let readme: string;

  beforeAll(async () => {
    lib = await packLibrary();
    pkg = JSON.parse(readFileSync(join(lib.packageDir, 'package.json'), 'utf8')) as PackageJson;
    files = filesUnder(lib.packageDir).map((f) => relative(lib.packageDir, f));
    readme = readFileSync(join(lib.packageDir, 'README.md'), 'utf8');
  }, 300_000);

  it('ships README, LICENSE, the compiled entry points, the Lua scripts, the schema .sql files and the dashboard page, and no sources or source maps', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json']));
    expect(readFileSync(join(lib.packageDir, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : [e.types, e.default]))];
    for (const paths of Object.values(pkg.typesVersions['*'])) targets.push(...paths);
    for (const t of targets) expect({ target: t, shipped: existsSync(join(lib.packageDir, t)) }).toEqual({ target: t, shipped: true });
    const lua = readdirSync(join(REPO_ROOT, 'libs/priority-queue/src/stores/redis/lua'));
    for (const l of lua) expect(files).toContain(`dist/stores/redis/lua/${l}`);
    // the TypeORM store reads its migration from schema/<dialect>/*.sql beside sql-files.js
    const schema = join(REPO_ROOT, 'libs/priority-queue/src/stores/typeorm/schema');
    const sql = ['postgres', 'mysql', 'sqlite'].flatMap((d) => readdirSync(join(schema, d)).map((f) => `dist/stores/typeorm/schema/${d}/${f}`));
    expect(sql.filter((f) => f.endsWith('/1-tables.sql'))).toHaveLength(3);
    for (const f of sql) expect(files).toContain(f);
    const assets = readdirSync(join(REPO_ROOT, 'libs/priority-queue/src/dashboard/assets'));
    for (const a of assets) expect(files).toContain(`dist/dashboard/assets/${a}`);
    const unexpected = files.filter(
      (f) => !/^(README\.md|LICENSE|package\.json|dist\/.*\.(js|d\.ts|lua)|dist\/stores\/typeorm\/schema\/(postgres|mysql|sqlite)\/[^/]+\.sql|dist\/dashboard\/assets\/[^/]+)$/.test(f),
    );
    expect(unexpected).toEqual([]);
    for (const f of files.filter((x) => x.endsWith('.js'))) {
      expect({ f, map: readFileSync(join(lib.packageDir, f), 'utf8').includes('sourceMappingURL') }).toEqual({ f, map: false });
    }
  });

  it('its published types never name an optional peer the app may not have (prom-client)', () => {
    for (const f of files.filter((x) => x.endsWith('.d.ts'))) {
      const text = readFileSync(join(lib.packageDir, f), 'utf8');
      expect({ f, promClient: /from 'prom-client'|import\('prom-client'\)/.test(text) }).toEqual({ f, promClient: false });
    }
  });

  it('has the metadata a registry page shows: license, repository, keywords, sideEffects', () => {
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPO_URL}.git`, directory: 'libs/priority-queue' });
    expect(pkg.keywords).toEqual(expect.arrayContaining(['nestjs', 'queue', 'priority-queue', 'redis', 'typeorm']));
    expect(pkg.sideEffects).toBe(false);
  });

  it('claims in engines and peer ranges exactly what the compatibility matrix tests', () => {
    const majors = Object.values(NODE_RUNTIMES).map((r) => r.major);
    expect(pkg.engines.node).toBe('^20.19.0 || ^22.12.0 || ^24.0.0');
    expect(pkg.engines.node.match(/\^(\d+)\./g)!.map((m) => Number(m.slice(1, -1)))).toEqual(majors);
    // every claimed major of a peer is pinned by some app of the matrix (or the next-drivers run), and every pin satisfies the range
    const lines = (range: string) => range.split('||').map((r) => r.trim().replace(/^\^/, '').split('.').slice(0, r.trim().startsWith('^0.') ? 2 : 1).join('.'));
    const lineOf = (v: string) => (v.startsWith('0.') ? v.split('.').slice(0, 2).join('.') : v.split('.')[0]);
    for (const peer of ['@nestjs/common', '@nestjs/core', '@nestjs/schedule', '@nestjs/terminus', 'typeorm', 'ioredis']) {
      const range = pkg.peerDependencies[peer];
      const pinned = COMBINATIONS.map((c) => c.dependencies[peer]).concat((NEXT_DRIVERS as Record<string, string>)[peer] ?? []);
      for (const v of pinned) expect({ peer, v, ok: semver.satisfies(v, range) }).toEqual({ peer, v, ok: true });
      expect({ peer, lines: lines(range).sort() }).toEqual({ peer, lines: [...new Set(pinned.map(lineOf))].sort() });
    }
    expect(pkg.peerDependencies).toMatchObject({ '@nestjs/common': '^11.0.0 || ^12.0.0', typeorm: '^0.3.20 || ^1.0.0', ioredis: '^5.4.0 || ^6.0.0' });
    for (const optional of ['typeorm', 'ioredis', 'prom-client']) expect(pkg.peerDependenciesMeta[optional]).toEqual({ optional: true });
  });

  it('its README links only to absolute URLs, and those into the repository point at files that exist', () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(3);
    for (const link of links) expect({ link, absolute: /^https:\/\//.test(link) }).toEqual({ link, absolute: true });
    for (const link of links.filter((l) => l.startsWith(`${REPO_URL}/`))) {
      const m = /^https:\/\/github\.com\/[^/]+\/[^/]+\/(?:blob|tree)\/main\/([^#?]+)/.exec(link);
      expect({ link, inRepo: !!m && existsSync(join(REPO_ROOT, m[1])) }).toEqual({ link, inRepo: true });
    }
    expect(pkg.repository.url).toBe(`git+${REPO_URL}.git`);
  });

  it('its README documents every export, every TaskManager and AdmissionGuard method and every option', () => {
    const dist = join(lib.packageDir, 'dist');
    const mentioned = (name: string) => new RegExp(`\\b${name.replace(/[$]/g, '\\$&')}\\b`).test(readme);
    const names = [
      ...exportedNames(join(dist, 'index.d.ts')),
      ...exportedNames(join(dist, 'redis.d.ts')),
      ...exportedNames(join(dist, 'typeorm.d.ts')),
      ...exportedNames(join(dist, 'health.d.ts')),
      ...exportedNames(join(dist, 'dashboard.d.ts')),
      ...membersOf(join(dist, 'dashboard/dashboard.options.d.ts'), 'PriorityQueueDashboardOptions'),
      ...membersOf(join(dist, 'nest/task-manager.service.d.ts'), 'TaskManager'),
      ...membersOf(join(dist, 'nest/admission-guard.service.d.ts'), 'AdmissionGuard'),
      ...membersOf(join(dist, 'nest/priority-queue.options.d.ts'), 'PriorityQueueModuleOptions'),
      ...membersOf(join(dist, 'nest/priority-queue.options.d.ts'), 'WorkerModuleOptions'),
      ...membersOf(join(dist, 'nest/priority-queue.options.d.ts'), 'QueueOptions'),
      ...membersOf(join(dist, 'nest/priority-queue.options.d.ts'), 'RegisterQueueOptions'),
      ...membersOf(join(dist, 'nest/priority-queue.options.d.ts'), 'RegisterQueueAsyncOptions'),
      ...membersOf(join(dist, 'nest/priority-task.decorator.d.ts'), 'PriorityTaskOptions'),
      ...membersOf(join(dist, 'nest/on-task-event.decorator.d.ts'), 'OnTaskEventOptions'),
      ...membersOf(join(dist, 'core/wait-for.d.ts'), 'WaitForOptions'),
      ...membersOf(join(dist, 'core/task-query.d.ts'), 'TaskQuery'),
      ...membersOf(join(dist, 'core/task-query.d.ts'), 'TaskPage'),
      ...membersOf(join(dist, 'core/explain.d.ts'), 'TaskExplanation'),
      ...membersOf(join(dist, 'core/explain.d.ts'), 'LaneRefusal'),
      ...membersOf(join(dist, 'core/history.d.ts'), 'TaskHistoryEntry'),
      ...membersOf(join(dist, 'stores/memory/memory-store.factory.d.ts'), 'MemoryStoreOptions'),
      ...membersOf(join(dist, 'stores/redis/redis-store.factory.d.ts'), 'RedisStoreWithUrl'),
      ...membersOf(join(dist, 'stores/redis/redis-store.factory.d.ts'), 'RedisStoreCommon'),
      ...membersOf(join(dist, 'stores/typeorm/typeorm-store.factory.d.ts'), 'TypeOrmStoreOptions'),
      ...membersOf(join(dist, 'health/priority-queue-health.indicator.d.ts'), 'PriorityQueueHealthOptions'),
      ...membersOf(join(dist, 'health/priority-queue-health.indicator.d.ts'), 'QueueHealth'),
      ...membersOf(join(dist, 'core/handler.d.ts'), 'TaskTypeOptions'),
      ...membersOf(join(dist, 'core/validation.d.ts'), 'SubmitInput'),
      ...membersOf(join(dist, 'core/task.d.ts'), 'Task'),
      ...membersOf(join(dist, 'stores/redis/redis-task-store.d.ts'), 'RedisTaskStoreOptions'),
      ...membersOf(join(dist, 'stores/typeorm/typeorm-task-store.d.ts'), 'TypeOrmTaskStoreOptions'),
    ].filter((n) => n !== 'constructor');
    expect(names.length).toBeGreaterThan(100);
    expect(names.filter((n) => !mentioned(n))).toEqual([]);
    expect(readme).toMatch(/npm install nestjs-priority-queue @nestjs\/common @nestjs\/core @nestjs\/schedule reflect-metadata rxjs/);
  });

  it('exports every type its public API names (what a method returns or takes, an option, a store port type)', () => {
    const dist = join(lib.packageDir, 'dist');
    const entries = ['index', 'redis', 'typeorm', 'health', 'dashboard'].map((e) => join(dist, `${e}.d.ts`));
    expect(unexportedPublicTypes(entries, lib.packageDir)).toEqual([]);
  });

  it("its README's tested-with table names the versions the matrix pins", () => {
    for (const c of COMBINATIONS) {
      for (const pkgName of ['@nestjs/core', '@nestjs/schedule', '@nestjs/terminus', 'typeorm', 'ioredis', 'typescript', 'bullmq']) {
        const v = c.dependencies[pkgName];
        if (v) expect({ app: c.id, pkgName, v, inReadme: readme.includes(v) }).toEqual({ app: c.id, pkgName, v, inReadme: true });
      }
    }
  });

  it('the repository README keeps the two workspace commands at the top', () => {
    const top = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').split('\n').slice(0, 8).join('\n');
    expect(top).toContain('npm install && npm start');
    expect(top).toContain('npm test');
  });
});
