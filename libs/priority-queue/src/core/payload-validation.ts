import { ValidationError } from './errors';
import { Messages } from './messages';

/** Largest payload accepted by default, in bytes of its JSON (option maxPayloadBytes). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;
/** Deepest nesting of arrays and objects in a payload (MySQL's JSON and MongoDB's documents stop at 100 too). */
export const MAX_PAYLOAD_DEPTH = 100;

/** A payload must round-trip through JSON unchanged: plain data only, finite numbers, no cycles, at most MAX_PAYLOAD_DEPTH deep. */
export function validatePayload(payload: unknown, maxPayloadBytes: number): void {
  if (payload === undefined) return;
  const walk = new PayloadWalk();
  const bound = walk.size(payload);
  if (bound < 0) {
    if (walk.tooDeep) throw new ValidationError(Messages.invalidSubmit(Messages.payloadTooDeep(MAX_PAYLOAD_DEPTH)), ['payload: too deep']);
    const problem = walk.problem(payload);
    throw new ValidationError(Messages.payloadNotJson(problem), [problem]);
  }
  if (bound <= maxPayloadBytes) return; // an upper bound of the JSON size: no need to serialise it here
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > maxPayloadBytes) {
    throw new ValidationError(Messages.payloadTooLarge(bytes, maxPayloadBytes), ['payload: too large']);
  }
}

/** Longest JSON text of a finite number (e.g. -1.2345678901234567e-308). */
const NUMBER_MAX_CHARS = 25;

/**
 * One walk over a payload: `size` returns an upper bound of its JSON size in UTF-8 bytes (a string
 * of n UTF-16 units takes at most 6n + 2: a \uXXXX escape), or -1 at the first value JSON cannot
 * carry; `problem` then says which and where (the path is built on this error path only).
 */
class PayloadWalk {
  /** Objects and arrays being walked (ancestors of the current value): a repeat is a cycle. */
  private readonly ancestors: object[] = [];
  /** Set when size() stopped because the payload nests deeper than MAX_PAYLOAD_DEPTH. */
  tooDeep = false;

  size(v: unknown): number {
    switch (typeof v) {
      case 'string':
        return 6 * v.length + 2;
      case 'boolean':
        return 5;
      case 'number':
        return Number.isFinite(v) ? NUMBER_MAX_CHARS : -1;
      case 'object':
        break;
      default:
        return -1; // undefined (inside the payload), bigint, function, symbol
    }
    if (v === null) return 4;
    const obj = v as object;
    const ancestors = this.ancestors;
    for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === obj) return -1;
    if (ancestors.length >= MAX_PAYLOAD_DEPTH) {
      this.tooDeep = true;
      return -1;
    }
    let total = 2;
    ancestors.push(obj);
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const n = this.size(obj[i]);
        if (n < 0) return -1;
        total += n + 1;
      }
    } else {
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) return -1;
      for (const key of Object.keys(obj)) {
        const n = this.size((obj as Record<string, unknown>)[key]);
        if (n < 0) return -1;
        total += n + 6 * key.length + 4;
      }
    }
    ancestors.pop();
    return total;
  }

  /** What is wrong with a payload whose size() was -1 (a second, slower walk with paths). */
  problem(payload: unknown): string {
    return jsonProblem(payload, 'payload', new Set()) ?? 'payload is not JSON-serialisable';
  }
}

function jsonProblem(v: unknown, path: string, seen: Set<object>): string | null {
  switch (typeof v) {
    case 'undefined':
      return path === 'payload' ? null : `${path} is undefined`;
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(v) ? null : `${path} is ${v}`;
    case 'bigint':
      return `${path} is a BigInt`;
    case 'function':
      return `${path} is a function`;
    case 'symbol':
      return `${path} is a symbol`;
  }
  if (v === null) return null;
  const obj = v as object;
  if (seen.has(obj)) return `${path} is a circular reference`;
  if (seen.size >= MAX_PAYLOAD_DEPTH) return Messages.payloadTooDeep(MAX_PAYLOAD_DEPTH); // size() reports it first
  if (Array.isArray(obj)) {
    seen.add(obj);
    for (let i = 0; i < obj.length; i++) {
      const p = jsonProblem(obj[i], `${path}[${i}]`, seen);
      if (p) return p;
    }
    seen.delete(obj);
    return null;
  }
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) {
    return `${path} is a ${obj.constructor?.name ?? 'non-plain object'} (not a plain object)`;
  }
  seen.add(obj);
  for (const key of Object.keys(obj)) {
    const p = jsonProblem((obj as Record<string, unknown>)[key], `${path}.${key}`, seen);
    if (p) return p;
  }
  seen.delete(obj);
  return null;
}
