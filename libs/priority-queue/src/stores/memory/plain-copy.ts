// The memory store keeps an object payload as a private deep copy (or as JSON text when it is not
// plain data), so that no caller can reach and mutate what the store holds: TaskTable.storedPayload
// and toTask (task-table.ts) decide when to copy; this file only copies.

/** What plainCopy answers for a value that is not plain JSON data. */
export const NOT_PLAIN: unique symbol = Symbol('not plain data');

/**
 * A deep copy of plain JSON data (plain objects, arrays, strings, finite numbers, booleans,
 * null), as a JSON round trip would give it (-0 becomes 0, an own "__proto__" key stays a key);
 * NOT_PLAIN for anything else (the caller then keeps JSON text).
 */
export function plainCopy(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? (v === 0 ? 0 : v) : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (v === null) return null;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = plainCopy(v[i]);
      if (x === NOT_PLAIN) return NOT_PLAIN;
      out[i] = x;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = plainCopy((v as Record<string, unknown>)[k]);
    if (x === NOT_PLAIN) return NOT_PLAIN;
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}
