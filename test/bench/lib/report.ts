import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Measurement } from '../scenario';
import type { BenchTarget, Profile } from '../target';

export interface Cell extends Measurement {
  target: string;
  scenario: string;
  /** The profile the target ran in (default tuned). */
  profile?: Profile;
  error?: string;
  /** With --repeat: the value of every round (the cell keeps the best). */
  rounds?: number[];
}

export interface Column {
  header: string;
  value(row: RowKey): string;
}

export interface RowKey {
  metric: string;
  label: string;
  unit: string;
  better: Measurement['better'];
}

export function formatValue(value: number | null | undefined, unit: string): string {
  if (value === null || value === undefined || Number.isNaN(value)) return 'n/a';
  if (!Number.isFinite(value)) return '∞';
  switch (unit) {
    case 'jobs/s':
      return Math.round(value).toLocaleString('en-US');
    case 'µs':
      return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
    case 'ms':
      return value >= 100 ? Math.round(value).toString() : value.toFixed(1);
    case '%':
      return value === 0 ? '0' : value.toFixed(2);
    case 'x':
      return value.toFixed(2);
    case 'calls/s':
      return value >= 100 ? Math.round(value).toLocaleString('en-US') : value >= 10 ? value.toFixed(1) : value.toFixed(2);
    case 'count':
      return String(value);
    default:
      return String(+value.toFixed(3));
  }
}

/**
 * How many times better ours is than the peer: ours/peer when higher is better, peer/ours when
 * lower is better; not meaningful for the "must be zero" rows and the growth factors.
 */
export function ratio(ours: number | null | undefined, peer: number | null | undefined, row: RowKey): string {
  if (row.better === 'zero' || row.unit === 'x') return '';
  if (ours == null || peer == null || !Number.isFinite(ours) || !Number.isFinite(peer) || ours <= 0 || peer <= 0) return '';
  const r = row.better === 'higher' ? ours / peer : peer / ours;
  return `${r >= 10 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(1) : r.toFixed(2)}x`;
}

/** A Markdown table: rows = measurements, columns = targets, plus ours/peer ratio columns. */
export function renderTable(rows: RowKey[], columns: Column[]): string {
  const header = ['scenario', ...columns.map((c) => c.header)];
  const body = rows.map((r) => [r.label, ...columns.map((c) => c.value(r))]);
  const widths = header.map((h, k) => Math.max(h.length, ...body.map((b) => b[k].length)));
  const line = (cells: string[]) =>
    '| ' + cells.map((c, k) => (k === 0 ? c.padEnd(widths[k]) : c.padStart(widths[k]))).join(' | ') + ' |';
  const sep = '|' + widths.map((w, k) => (k === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|';
  return [line(header), sep, ...body.map(line)].join('\n');
}

export interface RunFacts {
  runId: string;
  at: string;
  quick: boolean;
  seed: number;
  commit: string;
  machine: unknown;
  servers: Record<string, string>;
}

/** Appends one JSON line per measurement (self-contained: run facts, target version and tuning). */
export function appendResults(dir: string, facts: RunFacts, cells: Cell[], targets: Map<string, BenchTarget>): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'results.jsonl');
  const lines = cells.map((c) => {
    const t = targets.get(c.target);
    return JSON.stringify({
      ...facts,
      target: c.target,
      server: t?.server,
      version: t?.version,
      profile: c.profile ?? 'tuned',
      tuning: c.profile === 'defaults' ? t?.defaults : t?.tuning,
      scenario: c.scenario,
      metric: c.metric,
      value: c.value,
      unit: c.unit,
      ...(c.note ? { note: c.note } : {}),
      ...(c.rounds ? { rounds: c.rounds } : {}),
      ...(c.error ? { error: c.error } : {}),
    });
  });
  appendFileSync(file, lines.join('\n') + '\n');
  return file;
}
