import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const tsc = require.resolve('typescript/bin/tsc');

/**
 * The declarations a user compiles against: built from the library as `npm run build:lib` does,
 * installed in a throw-away consumer project, compiled with skipLibCheck false. The root entry
 * must compile with none of the optional peers (prom-client, ioredis, typeorm, @nestjs/terminus)
 * installed; the type-level tests (test/types) compile against the subpath entries too.
 * Cost: one declaration build and two consumer compiles (about 30 s on 2 busy cores).
 */
describe('published type declarations', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pq-types-'));
    const lib = join(dir, 'node_modules', 'nestjs-priority-queue');
    execFileSync(process.execPath, [tsc, '-p', join(root, 'libs/priority-queue/tsconfig.lib.json'), '--outDir', join(lib, 'dist'), '--emitDeclarationOnly', '--sourceMap', 'false'], {
      stdio: 'pipe',
    });
    cpSync(join(root, 'libs/priority-queue/package.json'), join(lib, 'package.json'));
  }, 180_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A consumer project whose node_modules holds the library (a copy) and links to `deps` only. */
  function compile(name: string, source: string, deps: string[]): string {
    const project = join(dir, name);
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
    mkdirSync(join(project, 'node_modules', '@nestjs'), { recursive: true });
    // a copy, not a link: the declarations must resolve their imports from the consumer's node_modules
    cpSync(join(dir, 'node_modules', 'nestjs-priority-queue'), join(project, 'node_modules', 'nestjs-priority-queue'), { recursive: true });
    for (const d of [...deps, '@types/node']) symlinkSync(join(root, 'node_modules', d), join(project, 'node_modules', d));
    writeFileSync(join(project, 'consumer.ts'), source);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          target: 'ES2022',
          module: 'commonjs',
          moduleResolution: 'node',
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          esModuleInterop: true,
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    try {
      return execFileSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      throw new Error(`consumer ${name} does not compile:\n${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`);
    }
  }

  const nest = ['@nestjs/common', '@nestjs/core', '@nestjs/schedule', 'rxjs', 'reflect-metadata', 'class-validator'];

  it('the root entry compiles without prom-client, ioredis, typeorm or @nestjs/terminus installed', () => {
    const source = `
      import 'reflect-metadata';
      import { Module } from '@nestjs/common';
      import { PriorityQueueModule, PriorityQueueMetrics, memoryStore, type MetricsRegistry } from 'nestjs-priority-queue';
      @Module({ imports: [PriorityQueueModule.forRoot({ store: memoryStore(), metrics: true }), PriorityQueueModule.registerQueue({ name: 'reports' })] })
      export class AppModule {}
      export async function scrape(m: PriorityQueueMetrics): Promise<string> {
        const r: MetricsRegistry | null = m.registry;
        return r ? r.metrics() : '';
      }`;
    expect(compile('root', source, nest)).toBe('');
    expect(readdirSync(join(dir, 'root', 'node_modules'))).not.toEqual(expect.arrayContaining(['prom-client', 'ioredis', 'typeorm']));
  });

  it('the type-level tests compile against the published subpath entries (wrong store objects are compile errors)', () => {
    const source = require('node:fs').readFileSync(join(root, 'test/types/store-factories.type-test.ts'), 'utf8') as string;
    expect(compile('stores', source, [...nest, 'ioredis', 'typeorm', '@nestjs/terminus'])).toBe('');
  });
});
