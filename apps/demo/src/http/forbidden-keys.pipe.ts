import { BadRequestException, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';

/**
 * Keys that name an object's prototype machinery. JSON.parse makes them ordinary own properties,
 * so they pass the DTO whitelist (class-transformer and class-validator look at declared fields),
 * yet code that copies or merges the body can turn them into prototype pollution.
 */
export const FORBIDDEN_BODY_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/**
 * Global pipe, before validation: a request body carrying a forbidden key at any depth is a 400
 * that names where, and nothing runs. Walks the parsed JSON without recursion, so a deeply nested
 * body cannot overflow the stack.
 */
@Injectable()
export class ForbiddenKeysPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body') return value;
    const found = forbiddenKeyPaths(value);
    if (found.length) {
      throw new BadRequestException(found.map((path) => `${path}: the key "${path.split('.').pop()}" is not allowed in a request body`));
    }
    return value;
  }
}

/** Paths (`documents.0.constructor`) of forbidden own keys in a parsed JSON value; at most 10. */
export function forbiddenKeyPaths(value: unknown): string[] {
  const found: string[] = [];
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  while (stack.length && found.length < 10) {
    const { v, path } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const key of Object.keys(v)) {
      const at = path ? `${path}.${key}` : key;
      if (FORBIDDEN_BODY_KEYS.includes(key)) found.push(at);
      else stack.push({ v: (v as Record<string, unknown>)[key], path: at });
    }
  }
  return found;
}
