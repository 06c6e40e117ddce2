import type { DocumentInput } from '../work/work-submitter';

/** The historic documents of one tenant archived on `night` (YYYY-MM-DD), with their idempotency keys. */
export function archiveDocuments(tenantId: string, night: string, count: number): { docs: DocumentInput[]; keys: string[] } {
  const docs: DocumentInput[] = [];
  const keys: string[] = [];
  for (let i = 1; i <= count; i++) {
    docs.push({ name: `archive/${tenantId}/${night}/doc-${i}.pdf`, pages: 1 + (i % 5) });
    keys.push(`archive:${tenantId}:${night}:${i}`);
  }
  return { docs, keys };
}

export function nightOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}
