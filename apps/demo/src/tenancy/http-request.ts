import type { TenantConfig } from '../config/demo-config';

/** The few request fields the guards read (kept free of express typings). */
export interface HttpRequest {
  headers: Record<string, string | string[] | undefined>;
  tenant?: TenantConfig;
}

/** One header's value, or undefined when absent or repeated. */
export function headerOf(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return typeof v === 'string' ? v : undefined;
}
