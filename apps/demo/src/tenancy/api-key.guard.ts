import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { headerOf, type HttpRequest } from './http-request';
import { TenantDirectory } from './tenant-directory';

export const API_KEY_HEADER = 'x-api-key';

/** Maps the x-api-key header to a configured tenant; 401 when missing or unknown. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly tenants: TenantDirectory) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const key = headerOf(req, API_KEY_HEADER);
    if (!key) throw new UnauthorizedException(`send your tenant's API key in the ${API_KEY_HEADER} header`);
    const tenant = this.tenants.byApiKey(key);
    if (!tenant) throw new UnauthorizedException(`unknown API key in the ${API_KEY_HEADER} header`);
    req.tenant = tenant;
    return true;
  }
}
