/** The subscription plan of a tenant. */
export enum Plan {
  FREE = 'FREE',
  PRO = 'PRO',
  ENTERPRISE = 'ENTERPRISE',
}

export const PLANS: readonly Plan[] = Object.values(Plan);
