import { Module } from '@nestjs/common';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { CredentialCache } from '#auth/credential-cache.js';
import { Sql } from '#database/sql.js';
import { OBJECT_SERVICES, OBJECT_SERVICES_PROVIDER } from '../objects/object-service.js';
import { RecordsService } from '../objects/records.service.js';
import { CountCache } from './count-cache.js';
import { IdempotencyStore } from '../http/idempotency.js';
import { RecordStore } from './record-store.js';

/**
 * The one service layer of every record object, for the REST, GraphQL and MCP transports
 * to import (STYLE 13): the store, the per-object services, and the bearer authentication
 * the GraphQL context needs. The DataSource comes from the root TypeORM module (global).
 */
@Module({
  providers: [
    Sql,
    CountCache,
    RecordStore,
    RecordsService,
    ...OBJECT_SERVICES,
    OBJECT_SERVICES_PROVIDER,
    CredentialCache,
    BearerAuthService,
    IdempotencyStore,
  ],
  exports: [
    Sql,
    RecordStore,
    RecordsService,
    ...OBJECT_SERVICES,
    OBJECT_SERVICES_PROVIDER,
    CredentialCache,
    BearerAuthService,
    IdempotencyStore,
  ],
})
export class RecordsModule {}
