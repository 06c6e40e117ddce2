import 'reflect-metadata';
import { Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { PriorityQueueModule } from 'nestjs-priority-queue';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompatStep } from './step.js';
import { ALL_STEPS } from './steps/index.js';
import { openStore, type OpenStore, type StoreName } from './stores.js';

/**
 * The compatibility app: for each store of COMPAT_STORES it builds a Nest HTTP application on it
 * (listening on a free loopback port) with the steps of steps/index.ts, runs them and prints one
 * result line (RESULT_MARKER + JSON) that test/compat reads. Exit code 0 when every step passed;
 * the process must then end by itself.
 */
const RESULT_MARKER = 'PQ-COMPAT-RESULT ';
const EXIT_GRACE_MS = 10_000;

interface StepResult {
  store: string;
  step: string;
  ok: boolean;
  ms: number;
  detail?: string;
}

@Module({})
class CompatAppModule {
  static on(store: OpenStore, steps: CompatStep[]): DynamicModule {
    return {
      module: CompatAppModule,
      imports: [
        ScheduleModule.forRoot(),
        PriorityQueueModule.forRoot({ store: store.backend, workers: { concurrency: 4, idlePollMs: 50, recoverEveryMs: 500 }, logLevel: 'warn' }),
        ...steps.flatMap((s) => s.imports ?? []),
      ],
      providers: steps.flatMap((s) => s.providers ?? []),
      controllers: steps.flatMap((s) => s.controllers ?? []),
    };
  }
}

function installed(pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(process.cwd(), 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

function message(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
}

async function runOn(storeName: StoreName, steps: CompatStep[], results: StepResult[]): Promise<void> {
  const mine = steps.filter((s) => !s.stores || s.stores.includes(storeName));
  const started = Date.now();
  let store: OpenStore;
  try {
    store = await openStore(storeName);
  } catch (e) {
    results.push({ store: storeName, step: 'open the store', ok: false, ms: Date.now() - started, detail: message(e) });
    return;
  }
  try {
    const app: INestApplication = await NestFactory.create(CompatAppModule.on(store, mine), { logger: ['error', 'warn'] });
    try {
      await app.listen(0, '127.0.0.1');
      const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      for (const step of mine) {
        const t0 = Date.now();
        try {
          const detail = await step.run(app, { store, baseUrl });
          results.push({ store: storeName, step: step.name, ok: true, ms: Date.now() - t0, ...(detail ? { detail } : {}) });
        } catch (e) {
          results.push({ store: storeName, step: step.name, ok: false, ms: Date.now() - t0, detail: message(e) });
        }
      }
    } finally {
      await app.close();
    }
  } catch (e) {
    results.push({ store: storeName, step: 'start / stop the application', ok: false, ms: Date.now() - started, detail: message(e) });
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const steps = ALL_STEPS;
  const stores = (process.env.COMPAT_STORES ?? 'memory,redis,sqlite').split(',') as StoreName[];
  const results: StepResult[] = [];
  for (const s of stores) await runOn(s, steps, results);
  const versions = Object.fromEntries(
    ['nestjs-priority-queue', '@nestjs/core', '@nestjs/common', '@nestjs/schedule', '@nestjs/terminus', 'typeorm', 'ioredis', 'bullmq', 'better-sqlite3', 'typescript'].map((p) => [p, installed(p)]),
  );
  process.stdout.write(`${RESULT_MARKER}${JSON.stringify({ node: process.version, versions, results })}\n`);
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
  // every application was closed and every connection quit: the process must now end by itself
  setTimeout(() => {
    const open = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles().map((h) => h.constructor?.name ?? typeof h);
    process.stderr.write(`the app did not exit ${EXIT_GRACE_MS} ms after closing everything; open handles: ${open.join(', ')}\n`);
    process.exit(3);
  }, EXIT_GRACE_MS).unref();
}

main().catch((e: unknown) => {
  process.stderr.write(`compat app crashed: ${message(e)}\n`);
  process.exitCode = 2;
});
