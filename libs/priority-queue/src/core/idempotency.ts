import { createHash } from 'node:crypto';
import { IdempotencyConflictError } from './errors';
import type { NewTask } from './task';

/**
 * Idempotency keys (DESIGN §1): a key is bound to the type, tenant and payload of the task it
 * created. The same key with the same three returns that task; any other difference is an
 * IdempotencyConflictError and nothing of the create batch is written.
 *
 * Payloads are compared by a fingerprint of their canonical JSON (object keys sorted by UTF-16
 * code units, arrays in order, strings and numbers as JSON.stringify writes them), so key order
 * does not matter: { a: 1, b: 2 } equals { b: 2, a: 1 }. The queue computes it once per submit
 * that carries a key (NewTask.payloadFingerprint); a store that must compare inside the server
 * (Redis) keeps it with the task, the others recompute it for an existing task only when a key
 * is reused.
 */

/** The fields an idempotency key is bound to, in the order a conflict reports them. */
export type IdempotencyField = 'type' | 'tenantId' | 'payload';

/** What a key is compared on: the task's type, tenant and payload fingerprint. */
export interface IdempotencyScope {
  type: string;
  tenantId: string | null;
  payloadFingerprint: string;
}

/**
 * Canonical JSON of a validated payload (plain data, bounded depth: validation.ts). Object keys
 * are sorted, so the text does not depend on the order they were written in.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v === undefined ? null : v);
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + canonicalJson(v[i]);
    return s + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) s += (i ? ',' : '') + JSON.stringify(keys[i]) + ':' + canonicalJson(o[keys[i]]);
  return s + '}';
}

/** SHA-256 of the canonical JSON of a payload, base64url (43 characters). */
export function payloadFingerprint(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload), 'utf8').digest('base64url');
}

/** The scope of a task to create (its fingerprint as the queue computed it, else computed now). */
export function scopeOf(t: NewTask): IdempotencyScope {
  return { type: t.type, tenantId: t.tenantId, payloadFingerprint: t.payloadFingerprint ?? payloadFingerprint(t.payload) };
}

/** The fields in which two scopes differ; empty when the key may return the existing task. */
export function scopeDifferences(existing: IdempotencyScope, incoming: IdempotencyScope): IdempotencyField[] {
  const out: IdempotencyField[] = [];
  if (existing.type !== incoming.type) out.push('type');
  if (existing.tenantId !== incoming.tenantId) out.push('tenantId');
  if (existing.payloadFingerprint !== incoming.payloadFingerprint) out.push('payload');
  return out;
}

/**
 * Checks a create batch before anything is written (all or none): every input with a key must
 * match the task that already holds the key (`stored`) or, failing that, the first input of
 * the batch with that key. Throws IdempotencyConflictError at the first input that does not.
 * Lookups and fingerprints are made only for inputs that carry a key.
 */
export function checkIdempotentBatch(
  tasks: readonly NewTask[],
  stored: (key: string) => (IdempotencyScope & { id: string }) | undefined,
): void {
  let firsts: Map<string, { id: string; scope: IdempotencyScope }> | undefined;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i];
    const key = t.idempotencyKey;
    if (key === null) continue;
    firsts ??= new Map();
    let holder = firsts.get(key);
    if (holder === undefined) {
      const s = stored(key);
      holder = s === undefined ? { id: t.id, scope: scopeOf(t) } : { id: s.id, scope: s };
      firsts.set(key, holder);
      if (s === undefined) continue; // this input creates the task of the key
    }
    const differs = scopeDifferences(holder.scope, scopeOf(t));
    if (differs.length) throw new IdempotencyConflictError(key, differs, holder.id, i);
  }
}
