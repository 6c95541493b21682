import type { ObjectPermissions, RecordAction, RecordObject, SettingsPermission } from '#database/entities/role.entity.js';
import { ForbiddenError } from '#records/errors.js';

/** Whoever a bearer token stands for, with the role it acts under in one workspace. */
export interface Principal {
  kind: 'apiKey' | 'user' | 'app';
  /** API key id, user id or app client id. */
  subjectId: string;
  workspaceId: string;
  role: {
    id: string;
    name: string;
    objectPermissions: ObjectPermissions;
    settingsPermissions: SettingsPermission[];
  };
}

export function can(principal: Principal, object: RecordObject, action: RecordAction): boolean {
  return principal.role.objectPermissions[object]?.[action] === true;
}

/** Object permissions are checked in the service layer, so REST, GraphQL and MCP share them. */
export function assertCan(principal: Principal, object: RecordObject, action: RecordAction): void {
  if (!can(principal, object, action)) {
    throw new ForbiddenError(`The role "${principal.role.name}" does not allow ${action} on ${object}`);
  }
}
