import type { DataSource } from 'typeorm';
import { ConfigurationError } from '../../core/errors';
import { Messages } from '../../core/messages';

/** Throws a clear error when `value` is not a TypeORM DataSource (DataSource options, a URL...). */
export function assertDataSource(value: unknown, where: string): asserts value is DataSource {
  const d = value as Partial<Record<'query' | 'createQueryRunner' | 'options', unknown>> | null;
  if (typeof d === 'object' && d !== null && typeof d.query === 'function' && typeof d.createQueryRunner === 'function' && typeof d.options === 'object') return;
  const looksLikeOptions = typeof d === 'object' && d !== null && typeof (d as { type?: unknown }).type === 'string';
  throw new ConfigurationError(Messages.notDataSource(where, looksLikeOptions));
}
