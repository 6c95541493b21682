import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BearerAuthGuard } from '#auth/auth.guard.js';
import { dataSourceOptions, resolveDatabaseUrl } from '#database/data-source.js';
import { RestExceptionFilter } from './http/rest-exception.filter.js';
import { OBJECT_CONTROLLERS } from './rest/object.controller.js';
import { ImportsModule } from '#records/imports/imports.module.js';
import { ApiAuthModule } from './http/api-auth.module.js';
import { AgentDiscoveryController } from './well-known/agent-discovery.controller.js';
import { DocsController } from './well-known/docs.controller.js';
import { WellKnownController } from './well-known/well-known.controller.js';
import { GraphqlApiModule } from './graphql/graphql-api.module.js';
import { McpController } from './mcp/mcp.controller.js';
import { MetadataController, ObjectsMetadataController, UniqueFieldsController } from './rest/metadata.controller.js';
import { CustomObjectController } from './rest/custom-object.controller.js';
import { SearchController } from './rest/search.controller.js';
import { FieldIndexSweeper } from '#identity/field-indexes.js';
import { DeletedObjectsSweeper } from '#identity/objects.js';
import { HealthModule } from '#ops/health.module.js';
import { RateLimitPool } from '#ops/rate-limits.js';
import { WebhooksWorker } from './webhooks/webhooks-worker.js';
import { ImportsController } from './imports/imports.controller.js';
import { ImportsWorker } from '#records/imports/imports-worker.js';
import { VaultController } from './vault/vault.controller.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: async () => dataSourceOptions((await resolveDatabaseUrl()).url),
    }),
    ImportsModule,
    ApiAuthModule,
    GraphqlApiModule,
    HealthModule,
  ],
  // One REST controller per declared object (rest/object.controller.ts).
  controllers: [
    WellKnownController,
    AgentDiscoveryController,
    DocsController,
    ...OBJECT_CONTROLLERS,
    MetadataController,
    UniqueFieldsController,
    SearchController,
    McpController,
    ImportsController,
    VaultController,
    ObjectsMetadataController,
    // Last: `/rest/<object>` of a workspace's own objects, after every other route.
    CustomObjectController,
  ],
  providers: [
    RateLimitPool.provider(),
    WebhooksWorker,
    ImportsWorker,
    FieldIndexSweeper,
    DeletedObjectsSweeper,
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_FILTER, useClass: RestExceptionFilter },
  ],
})
export class AppModule {}
