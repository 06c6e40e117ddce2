import { Inject, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { ADMIN_KEY_HEADER } from './admin-key.guard';
import { headerOf, type HttpRequest } from './http-request';
import { sameSecret } from './tenant-directory';

/**
 * The dashboard (/dashboard): the admin key, either in the x-admin-key header (scripts) or as the
 * password of HTTP Basic auth, any user name (a person in a browser: it asks once, then sends it
 * with every request of the page, the live stream included).
 */
@Injectable()
export class DashboardAccessGuard implements CanActivate {
  constructor(@Inject(DEMO_CONFIG) private readonly config: DemoConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const key = headerOf(req, ADMIN_KEY_HEADER) ?? basicPassword(headerOf(req, 'authorization'));
    if (key !== undefined && sameSecret(key, this.config.adminKey)) return true;
    http.getResponse<{ setHeader(name: string, value: string): void }>().setHeader('WWW-Authenticate', 'Basic realm="priority queue dashboard", charset="UTF-8"');
    throw new UnauthorizedException(`the dashboard needs the admin key: as the password of the browser's login prompt, or in the ${ADMIN_KEY_HEADER} header`);
  }
}

function basicPassword(authorization: string | undefined): string | undefined {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}
