import { ApiKeyEntity } from './api-key.entity.js';
import { RoleEntity } from './role.entity.js';
import { UserEntity } from './user.entity.js';
import { WorkspaceMemberEntity } from './workspace-member.entity.js';
import { WorkspaceEntity } from './workspace.entity.js';

export * from './api-key.entity.js';
export * from './role.entity.js';
export * from './user.entity.js';
export * from './workspace-member.entity.js';
export * from './workspace.entity.js';

export const ENTITIES = [WorkspaceEntity, UserEntity, RoleEntity, WorkspaceMemberEntity, ApiKeyEntity];
