import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryColumn('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id: string;

  @Column('text')
  name: string;

  @Column('uuid', { name: 'role_id' })
  roleId: string;

  /** SHA-256 of the secret: the secret itself is shown once and never stored. */
  @Column('text', { name: 'secret_hash', select: false })
  secretHash: string;

  @Column({ type: 'timestamptz', name: 'expires_at', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'timestamptz', name: 'revoked_at', precision: 3, nullable: true })
  revokedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'last_used_at', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column('uuid', { name: 'created_by_user_id', nullable: true })
  createdByUserId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
