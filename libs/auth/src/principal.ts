import type {
  FieldPermissions,
  ObjectPermissions,
  RecordCapability,
  RecordObject,
  SettingsPermission,
} from '#database/entities/role.entity.js';
import { ForbiddenError } from '#errors/errors.js';
import { scopeOfAction, scopeOfSettings, scopeRefusal } from './scopes.js';

/** Whoever a bearer token stands for, with the role it acts under in one workspace. */
export interface Principal {
  kind: 'apiKey' | 'user' | 'app';
  /** API key id, user id or app client id. */
  subjectId: string;
  workspaceId: string;
  /**
   * The workspace's `data_model_version` when the principal was read (0: no custom field
   * was ever added). Every data-model change moves it and drops cached principals, so it is
   * current on every request. Unset where the principal was not read from the database.
   */
  dataModelVersion?: number;
  /**
   * An access token's scopes when they narrow the role (it holds no `api`): `role` is then
   * already narrowed (scopes.ts roleThroughScopes), and a refusal names the scope missing.
   * Unset for API keys and `api` tokens.
   */
  scopes?: readonly string[];
  role: {
    id: string;
    name: string;
    objectPermissions: ObjectPermissions;
    settingsPermissions: SettingsPermission[];
    /** Fields the role may not read or update (field-access.ts); unset or `{}`: none. */
    fieldPermissions?: FieldPermissions;
  };
  /**
   * Record ids the REST idempotency layer derived for a create whose key it took over from an
   * earlier run that died before keeping its answer (apps/records-api/src/http/idempotency.ts):
   * records already holding all of them are that run's, and are the answer. Set on a copy of
   * the principal for that one request only.
   */
  retriedCreateIds?: ReadonlySet<string>;
  /**
   * An upsert sent with an `Idempotency-Key`: the id each record of the body gets if it is
   * created (by position), derived like a create's. They are not put in the body, where they
   * would take part in matching; on a retry that took the key over they are matched first
   * (RecordsService.upsertMany).
   */
  upsertCreateIds?: readonly string[];
}

export function can(
  principal: { role: Pick<Principal['role'], 'objectPermissions'> },
  object: RecordObject,
  action: RecordCapability,
): boolean {
  // A role that does not name an object holds what its "*" entry (every other object) allows.
  const permissions = principal.role.objectPermissions;
  return (permissions[object] ?? permissions['*'])?.[action] === true;
}

/** Object permissions are checked in the service layer, so REST, GraphQL and MCP share them. */
export function assertCan(principal: Principal, object: RecordObject, action: RecordCapability): void {
  if (!can(principal, object, action)) {
    throw (
      scopeRefusal(principal, scopeOfAction(action), `${action} on ${object}`) ??
      new ForbiddenError(`The role "${principal.role.name}" does not allow ${action} on ${object}`)
    );
  }
}

/** A settings permission the metadata API and the vault ask of a key or token; `what` names the refused thing for a token lacking its scope. */
export function assertSettingsPermission(principal: Principal, permission: SettingsPermission, what: string, refusal: string): void {
  if (principal.role.settingsPermissions.includes(permission)) return;
  throw scopeRefusal(principal, scopeOfSettings(permission), what) ?? new ForbiddenError(refusal);
}
