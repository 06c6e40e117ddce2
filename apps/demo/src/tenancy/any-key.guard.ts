import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AdminKeyGuard, ADMIN_KEY_HEADER } from './admin-key.guard';
import { ApiKeyGuard } from './api-key.guard';
import { headerOf, type HttpRequest } from './http-request';

/** Read-only routes open to a tenant's API key or to the admin key. */
@Injectable()
export class AnyKeyGuard implements CanActivate {
  constructor(
    private readonly admin: AdminKeyGuard,
    private readonly tenant: ApiKeyGuard,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    if (headerOf(req, ADMIN_KEY_HEADER) !== undefined) return this.admin.canActivate(context);
    return this.tenant.canActivate(context);
  }
}
