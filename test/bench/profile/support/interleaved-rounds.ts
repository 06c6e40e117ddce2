import type { BenchTarget } from '../../target';

/**
 * `rounds` rounds of one drain per target, the targets' order reversed every other round (so
 * neither always runs on the warmer machine); each row is printed by `line` as it comes.
 */
export async function interleavedRounds<Row>(
  targets: BenchTarget[],
  rounds: number,
  drain: (target: BenchTarget, round: number) => Promise<Row>,
  line: (row: Row, round: number) => string,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (let r = 1; r <= rounds; r++) {
    for (const t of r % 2 ? targets : [...targets].reverse()) {
      const row = await drain(t, r);
      rows.push(row);
      console.log(line(row, r));
    }
  }
  return rows;
}

/** Prints one `MEAN <target id> ...` line per target over its rows; `line` formats the means with `mean(field)`. */
export function printMeans<Row extends { target: string }>(targets: BenchTarget[], rows: Row[], line: (mean: (f: (r: Row) => number) => number) => string): void {
  for (const t of targets) {
    const mine = rows.filter((r) => r.target === t.id);
    const mean = (f: (r: Row) => number) => mine.reduce((s, r) => s + f(r), 0) / mine.length;
    console.log(`MEAN ${t.id.padEnd(16)} ${line(mean)}`);
  }
}
