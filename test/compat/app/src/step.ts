import type { DynamicModule, INestApplicationContext, Provider, Type } from '@nestjs/common';
import type { OpenStore } from './stores.js';

/**
 * One check the compatibility app runs on each store. A step adds what it needs to the app
 * module (imports, providers), then `run` drives it through the application context and
 * throws to fail, with a message that says what it saw. Adding a step: a file in steps/, an
 * entry in steps/index.ts and one in test/compat/steps.ts (which apps get it).
 */
export interface CompatStep {
  name: string;
  /** Stores the step runs on (default: every store of the run). */
  stores?: string[];
  imports?: Array<DynamicModule | Type<unknown>>;
  providers?: Provider[];
  run(app: INestApplicationContext, store: OpenStore): Promise<string | void>;
}

/** Polls `probe` until it returns something, or throws `what` after `timeoutMs`. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
