import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { TenantConfig } from '../config/demo-config';
import type { HttpRequest } from './http-request';

/** The tenant ApiKeyGuard resolved from the API key (the route must use ApiKeyGuard). */
export const CurrentTenant = createParamDecorator((_: unknown, context: ExecutionContext): TenantConfig => {
  const tenant = context.switchToHttp().getRequest<HttpRequest>().tenant;
  if (!tenant) throw new Error('CurrentTenant used on a route without ApiKeyGuard');
  return tenant;
});
