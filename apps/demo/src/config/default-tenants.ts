import { Plan } from '../priority/plan';
import type { TenantConfig } from './demo-config';

/** The demo's tenants, one per plan. Override with DEMO_TENANTS (a JSON array). */
export const DEFAULT_TENANTS: TenantConfig[] = [
  { id: 'acme', name: 'Acme Corp', plan: Plan.ENTERPRISE, apiKey: 'acme-key', vendorAccount: 'acct-acme' },
  { id: 'globex', name: 'Globex', plan: Plan.PRO, apiKey: 'globex-key', vendorAccount: 'acct-globex' },
  { id: 'initech', name: 'Initech', plan: Plan.FREE, apiKey: 'initech-key', vendorAccount: 'acct-initech' },
];
