import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { DEMO_CONFIG, type DemoConfig, type TenantConfig } from '../config/demo-config';

/** Tenants and plans from the configuration, looked up by API key or id. */
@Injectable()
export class TenantDirectory {
  private readonly byKey = new Map<string, TenantConfig>();
  private readonly byId = new Map<string, TenantConfig>();

  constructor(@Inject(DEMO_CONFIG) config: DemoConfig) {
    for (const t of config.tenants) {
      if (this.byKey.has(t.apiKey)) throw new Error(`two tenants share the API key of tenant ${t.id}`);
      this.byKey.set(t.apiKey, t);
      this.byId.set(t.id, t);
    }
  }

  byApiKey(apiKey: string): TenantConfig | undefined {
    return this.byKey.get(apiKey);
  }

  get(id: string): TenantConfig | undefined {
    return this.byId.get(id);
  }

  all(): TenantConfig[] {
    return [...this.byId.values()];
  }
}

/** Compares secrets in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
