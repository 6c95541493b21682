import { CanActivate, ExecutionContext, Injectable, SetMetadata, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { BearerAuthService } from './bearer-auth.service.js';
import type { Principal } from './principal.js';

export type AuthenticatedRequest = Request & { principal?: Principal };

const PUBLIC = 'auth:public';
/** Routes anyone may call without credentials (discovery, docs). */
export const Public = () => SetMetadata(PUBLIC, true);

export const isMcpPath = (path: string | undefined) => path === '/mcp' || Boolean(path?.startsWith('/mcp/'));

/** Reads the request of an HTTP or GraphQL execution context. */
export function requestOf(context: ExecutionContext): AuthenticatedRequest {
  if (context.getType<string>() === 'graphql') {
    return context.getArgs()[2]?.req as AuthenticatedRequest;
  }
  return context.switchToHttp().getRequest<AuthenticatedRequest>();
}

/** The request's principal: the one already set (Idempotency-Key's middleware), else its bearer credential's, or a 401. */
export async function authenticateRequest(auth: BearerAuthService, req: AuthenticatedRequest): Promise<Principal> {
  return (req.principal ??= await auth.authenticate(req.headers.authorization, isMcpPath(req.path) ? 'mcp' : 'api'));
}

/** One guard for every transport: the credential becomes `req.principal`, or a 401. */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly auth: BearerAuthService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    await authenticateRequest(this.auth, requestOf(context));
    return true;
  }
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = requestOf(context).principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without BearerAuthGuard');
  return principal;
});
