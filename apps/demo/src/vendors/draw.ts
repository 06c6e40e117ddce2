import type { MsRange } from '../config/demo-config';

/** A whole number of ms drawn uniformly in [min, max]. */
export function drawMs(range: MsRange, random: () => number): number {
  return Math.round(range.min + (range.max - range.min) * random());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
