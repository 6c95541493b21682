import type { RecordCapability, SettingsPermission } from '#database/entities/role.entity.js';
import { ForbiddenError } from '#errors/errors.js';
import type { Principal } from './principal.js';

/**
 * OAuth scopes of the records API (docs/authentication.md "Scopes";
 * docs/decisions/0063-oauth-scopes-for-agents.md). `api` is everything the role allows,
 * as it always was; the others narrow the role to part of it and never widen it.
 */
export const API_SCOPE = 'api';
export const NARROW_SCOPES = ['records:read', 'records:write', 'records:delete', 'data_model:write'] as const;
export type NarrowScope = (typeof NARROW_SCOPES)[number];
/** The scopes that reach /rest, /graphql and /mcp: a token holding none of them reaches nothing there. */
export const RESOURCE_SCOPES: readonly string[] = [API_SCOPE, ...NARROW_SCOPES];

/** The scope each record action needs when the token does not hold `api`. */
const SCOPE_OF_ACTION: Record<RecordCapability, NarrowScope> = {
  read: 'records:read',
  create: 'records:write',
  update: 'records:write',
  delete: 'records:delete',
  destroy: 'records:delete',
};
export const scopeOfAction = (action: RecordCapability): NarrowScope => SCOPE_OF_ACTION[action];

/** The settings permissions a narrow scope keeps; every other one (the vault among them) needs `api`. */
const SETTINGS_OF_SCOPE: Partial<Record<SettingsPermission, NarrowScope>> = { DATA_MODEL: 'data_model:write' };
export const scopeOfSettings = (permission: SettingsPermission): string => SETTINGS_OF_SCOPE[permission] ?? API_SCOPE;

/**
 * A 403 whose cause is the token's scopes, not the role: the HTTP answer adds
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1), which
 * MCP clients follow to ask for more (MCP authorization, "Scope challenge handling").
 */
export class InsufficientScopeError extends ForbiddenError {
  constructor(
    message: string,
    readonly scope: string,
  ) {
    super(message);
  }
}

/** The scopes of a token's `scope` claim (RFC 9068 §2.2.3: space-separated). */
export function scopesOf(claim: unknown): Set<string> {
  return new Set(typeof claim === 'string' ? claim.split(' ').filter(Boolean) : []);
}

/**
 * The role as a token holding `scopes` acts with it: unchanged under `api`, else each
 * record action only when its scope is held, and of the settings permissions only those a
 * held scope keeps. A scope never adds what the role lacks.
 */
export function roleThroughScopes(role: Principal['role'], scopes: ReadonlySet<string>): Principal['role'] {
  if (scopes.has(API_SCOPE)) return role;
  const objectPermissions = Object.fromEntries(
    Object.entries(role.objectPermissions).map(([object, actions]) => [
      object,
      Object.fromEntries(
        Object.entries(actions).map(([action, allowed]) => [
          action,
          allowed === true && scopes.has(SCOPE_OF_ACTION[action as RecordCapability]),
        ]),
      ),
    ]),
  ) as Principal['role']['objectPermissions'];
  const settingsPermissions = role.settingsPermissions.filter((p) => scopes.has(scopeOfSettings(p)));
  return { ...role, objectPermissions, settingsPermissions };
}

/**
 * The refusal to throw when `principal` is a token that lacks `scope` (`what` it was
 * refused, e.g. "create on companies"); undefined for API keys and tokens that hold it,
 * whose refusal is the role's.
 */
export function scopeRefusal(principal: Pick<Principal, 'scopes'>, scope: string, what: string): InsufficientScopeError | undefined {
  if (!principal.scopes || principal.scopes.includes(scope)) return undefined;
  const held = principal.scopes.length ? principal.scopes.join(' ') : 'none';
  return new InsufficientScopeError(`The access token's scopes (${held}) do not allow ${what}; it needs the scope ${scope}`, scope);
}

/** A token holding no scope of RESOURCE_SCOPES: refused before its role is read. */
export function noResourceScope(scopes: ReadonlySet<string>): InsufficientScopeError {
  const held = scopes.size ? [...scopes].join(' ') : 'none';
  return new InsufficientScopeError(
    `The access token's scopes (${held}) reach nothing here: authorize again asking for api or records:read ` +
      `(also records:write, records:delete, data_model:write)`,
    API_SCOPE,
  );
}
