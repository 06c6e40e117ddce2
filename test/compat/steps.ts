import type { Combination } from './matrix';

/**
 * The steps of the compatibility app (test/compat/app/src/steps), in run order, and which apps
 * get each. A step with `needs` runs only in apps whose dependencies include every package named
 * (at the given major or later).
 */
export interface StepEntry {
  /** File in app/src/steps, without extension. */
  file: string;
  /** The CompatStep it exports. */
  exportName: string;
  needs?: Array<{ pkg: string; minMajor?: number }>;
}

export const STEPS: StepEntry[] = [
  { file: 'handler-succeeds', exportName: 'handlerSucceeds' },
  { file: 'named-queue', exportName: 'namedQueue' },
  { file: 'health', exportName: 'health', needs: [{ pkg: '@nestjs/terminus' }] },
  { file: 'exception-filter', exportName: 'exceptionFilter' },
  { file: 'dashboard', exportName: 'dashboard' },
  { file: 'bullmq-side-by-side', exportName: 'bullmqSideBySide', needs: [{ pkg: 'bullmq' }] },
];

function major(version: string): number {
  return Number(/^(\d+)/.exec(version)?.[1] ?? NaN);
}

export function stepsFor(c: Combination): StepEntry[] {
  return STEPS.filter((s) =>
    (s.needs ?? []).every((n) => c.dependencies[n.pkg] !== undefined && (n.minMajor === undefined || major(c.dependencies[n.pkg]) >= n.minMajor)),
  );
}

/** The steps/index.ts of an app with these steps. */
export function stepsIndexSource(steps: StepEntry[]): string {
  return [
    "import type { CompatStep } from '../step.js';",
    ...steps.map((s) => `import { ${s.exportName} } from './${s.file}.js';`),
    '',
    `export const ALL_STEPS: CompatStep[] = [${steps.map((s) => s.exportName).join(', ')}];`,
    '',
  ].join('\n');
}
