import { Module } from '@nestjs/common';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { CredentialCache } from '#auth/credential-cache.js';
import { Sql } from '#database/sql.js';
import { ReadRouter } from '#database/read-routing.js';
import { OBJECT_SERVICES, OBJECT_SERVICES_PROVIDER } from './object-service.js';
import { CountCache } from './count-cache.js';
import { DataModel } from './data-model.js';
import { IdempotencyStore } from '../http/idempotency.js';
import { RecordsService } from './records.service.js';
import { RecordRepository } from './record-repository.js';
import { RecordWriter } from './record-writer.js';
import { RecordPolicy } from './record-policy.js';
import { ExportsService } from './exports.service.js';
import { SearchService } from './search.service.js';

/**
 * The records layer the REST (rest/), GraphQL (graphql/) and MCP (mcp/) transports import:
 * RecordsService (the one service between a transport and SQL) with the repository, writer
 * and permission policy it calls (imports write through the same writer), the per-object handles
 * that bind it to one object, and the bearer authentication the GraphQL context needs.
 * Nothing here imports a transport. The DataSource comes from the root TypeORM module (global).
 */
@Module({
  providers: [
    Sql,
    ReadRouter,
    CountCache,
    DataModel,
    RecordRepository,
    RecordWriter,
    RecordPolicy,
    RecordsService,
    ExportsService,
    SearchService,
    ...OBJECT_SERVICES,
    OBJECT_SERVICES_PROVIDER,
    CredentialCache,
    BearerAuthService,
    IdempotencyStore,
  ],
  exports: [
    Sql,
    ReadRouter,
    DataModel,
    RecordRepository,
    RecordWriter,
    RecordPolicy,
    RecordsService,
    ExportsService,
    SearchService,
    ...OBJECT_SERVICES,
    OBJECT_SERVICES_PROVIDER,
    CredentialCache,
    BearerAuthService,
    IdempotencyStore,
  ],
})
export class RecordsModule {}
