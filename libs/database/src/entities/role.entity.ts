import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { OBJECTS } from '#records/objects/index.js';

/** Every declared record object has its permissions (docs/authentication.md; docs/architecture.md). */
export const RECORD_OBJECTS: readonly string[] = OBJECTS.map((o) => o.plural);
export type RecordObject = string;
export const RECORD_ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type RecordAction = (typeof RECORD_ACTIONS)[number];
/** `destroy` (hard delete, for erasure requests) is held by the built-in Admin role only; roles made by users never have it. */
export type RecordCapability = RecordAction | 'destroy';
export type ObjectPermissions = Record<RecordObject, Record<RecordAction, boolean> & { destroy?: boolean }>;

export const SETTINGS_PERMISSIONS = ['API_KEYS_AND_WEBHOOKS', 'WORKSPACE_MEMBERS', 'ROLES', 'DATA_MODEL', 'VAULT'] as const;
export type SettingsPermission = (typeof SETTINGS_PERMISSIONS)[number];

@Entity('roles')
export class RoleEntity {
  @PrimaryColumn('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id: string;

  @Column('text')
  name: string;

  @Column('text', { default: '' })
  description: string;

  @Column('jsonb', { name: 'object_permissions' })
  objectPermissions: ObjectPermissions;

  @Column('text', { name: 'settings_permissions', array: true, default: () => "'{}'" })
  settingsPermissions: SettingsPermission[];

  @Column('boolean', { name: 'assignable_to_users', default: true })
  assignableToUsers: boolean;

  @Column('boolean', { name: 'assignable_to_api_keys', default: true })
  assignableToApiKeys: boolean;

  @Column('boolean', { name: 'is_editable', default: true })
  isEditable: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
