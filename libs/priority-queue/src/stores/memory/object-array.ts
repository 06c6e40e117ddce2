/**
 * An empty array whose elements are already of V8's "object" kind. A `[]` starts as small
 * integers and changes kind at its first object; code compiled for one store's arrays (already
 * changed) meets the next store's fresh `[]` with another map and deoptimizes at that store's
 * first create. The store's long-lived arrays of objects start in their final kind instead.
 */
export function objectArray<T>(): T[] {
  const a: T[] = [undefined as T];
  a.pop();
  return a;
}
