import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('workspace_members')
export class WorkspaceMemberEntity {
  @PrimaryColumn('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @PrimaryColumn('uuid', { name: 'user_id' })
  userId: string;

  @Column('uuid', { name: 'role_id' })
  roleId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
