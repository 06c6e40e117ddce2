import type { DynamicModule, INestApplication, Provider, Type } from '@nestjs/common';
import type { OpenStore } from './stores.js';

/** What a step gets besides the application: the store it runs on and the app's HTTP address. */
export interface StepContext {
  store: OpenStore;
  baseUrl: string;
}

/**
 * One check the compatibility app runs on each store. A step adds what it needs to the app
 * module (imports, providers, controllers), then `run` drives it through the application and
 * throws to fail, with a message that says what it saw. Adding a step: a file in steps/, an
 * entry in steps/index.ts and one in test/compat/steps.ts (which apps get it).
 */
export interface CompatStep {
  name: string;
  /** Stores the step runs on (default: every store of the run). */
  stores?: string[];
  imports?: Array<DynamicModule | Type<unknown>>;
  providers?: Provider[];
  controllers?: Array<Type<unknown>>;
  run(app: INestApplication, ctx: StepContext): Promise<string | void>;
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

/** Throws `message` with what was seen when `actual` differs from `expected` (compared as JSON). */
export function expectJson(actual: unknown, expected: unknown, message: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message}: expected ${e}, got ${a}`);
}
