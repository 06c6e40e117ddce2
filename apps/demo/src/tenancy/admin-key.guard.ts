import { Inject, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { headerOf, type HttpRequest } from './http-request';
import { sameSecret } from './tenant-directory';

export const ADMIN_KEY_HEADER = 'x-admin-key';

/** Admin routes: the x-admin-key header must carry the configured admin key. */
@Injectable()
export class AdminKeyGuard implements CanActivate {
  constructor(@Inject(DEMO_CONFIG) private readonly config: DemoConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const key = headerOf(context.switchToHttp().getRequest<HttpRequest>(), ADMIN_KEY_HEADER);
    if (!key || !sameSecret(key, this.config.adminKey)) {
      throw new UnauthorizedException(`admin routes need the admin key in the ${ADMIN_KEY_HEADER} header`);
    }
    return true;
  }
}
