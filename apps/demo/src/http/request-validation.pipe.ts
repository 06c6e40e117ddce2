import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';

/** Fields a client may never send, with the reason given back in the 400. */
const SERVER_SIDE_FIELDS: Record<string, string> = {
  priority: 'priority is decided by the server from your plan and the kind of work; remove it from the request body',
  tenantId: 'tenantId comes from your API key; remove it from the request body',
  tenant: 'the tenant comes from your API key; remove it from the request body',
};

/**
 * Request bodies are class-validator DTOs with whitelist + forbidNonWhitelisted: a field the
 * DTO does not declare is a 400 and nothing is queued. `priority` and `tenantId` get a message
 * that says why.
 */
export function createRequestValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => new BadRequestException(flatten(errors)),
  });
}

function flatten(errors: readonly ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    const constraints = e.constraints ?? {};
    for (const [name, message] of Object.entries(constraints)) {
      const reason = name === 'whitelistValidation' ? SERVER_SIDE_FIELDS[e.property] : undefined;
      out.push(reason ? `${path}: ${reason}` : message.replace(e.property, path));
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}
