import type { Request } from 'express';
import type { SettingsPermission } from '#database/entities/index.js';
import type { RolePermissions } from '#identity/roles.js';

/**
 * What a settings page or action needs: one settings permission, any of them, the create
 * permission on at least one record object (imports), or just membership.
 */
export type Requirement = SettingsPermission | 'ANY_SETTINGS' | 'CREATE_RECORDS' | 'MEMBER';

/** The signed-in member the settings pages act for, in the current workspace. */
export interface SettingsContext {
  userId: string;
  email: string;
  workspace: { id: string; name: string };
  role: RolePermissions & { id: string };
  /** Every workspace of the person, for the switcher. */
  workspaces: { id: string; name: string; role: string }[];
  csrf: string;
  /** The page's own path, to come back to after switching workspace. */
  path: string;
}

export type SettingsRequest = Request & { settings?: SettingsContext };

export interface Section {
  key: string;
  href: string;
  label: string;
  requires: Requirement;
}

/** The navigation, in order; an entry is shown only to members its requirement allows. */
export const SECTIONS: Section[] = [
  { key: 'home', href: '/settings', label: 'Overview', requires: 'MEMBER' },
  { key: 'api-keys', href: '/settings/api-keys', label: 'API keys', requires: 'API_KEYS_AND_WEBHOOKS' },
  { key: 'apps', href: '/settings/apps', label: 'Server apps', requires: 'API_KEYS_AND_WEBHOOKS' },
  { key: 'webhooks', href: '/settings/webhooks', label: 'Webhooks', requires: 'API_KEYS_AND_WEBHOOKS' },
  { key: 'vault', href: '/settings/vault', label: 'Vault', requires: 'VAULT' },
  { key: 'data-model', href: '/settings/data-model', label: 'Data model', requires: 'DATA_MODEL' },
  { key: 'imports', href: '/settings/imports', label: 'Import', requires: 'CREATE_RECORDS' },
  { key: 'roles', href: '/settings/roles', label: 'Roles', requires: 'ROLES' },
  { key: 'members', href: '/settings/members', label: 'Members', requires: 'WORKSPACE_MEMBERS' },
  { key: 'audit', href: '/settings/audit', label: 'Audit log', requires: 'ANY_SETTINGS' },
];

export function allows(role: Pick<RolePermissions, 'settingsPermissions' | 'objectPermissions'>, requirement: Requirement): boolean {
  if (requirement === 'MEMBER') return true;
  if (requirement === 'CREATE_RECORDS') return Object.values(role.objectPermissions).some((actions) => actions?.create === true);
  if (requirement === 'ANY_SETTINGS') return role.settingsPermissions.length > 0;
  return role.settingsPermissions.includes(requirement);
}
