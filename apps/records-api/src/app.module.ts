import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BearerAuthGuard } from '../../../libs/auth/src/auth.guard.js';
import { BearerAuthService } from '../../../libs/auth/src/bearer-auth.service.js';
import { dataSourceOptions, resolveDatabaseUrl } from '../../../libs/database/src/data-source.js';
import { Sql } from '../../../libs/database/src/sql.js';
import { CompaniesController } from './companies/companies.controller.js';
import { CompaniesService } from './companies/companies.service.js';
import { RestExceptionFilter } from './http/rest-exception.filter.js';
import { PeopleController } from './people/people.controller.js';
import { PeopleService } from './people/people.service.js';
import { CountCache } from './records/count-cache.js';
import { RecordStore } from './records/record-store.js';
import { DocsController } from './well-known/docs.controller.js';
import { WellKnownController } from './well-known/well-known.controller.js';
import { GraphqlApiModule } from './graphql/graphql-api.module.js';
import { McpController } from './mcp/mcp.controller.js';
import { WebhooksWorker } from './webhooks/webhooks-worker.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: async () => dataSourceOptions((await resolveDatabaseUrl()).url),
    }),
    GraphqlApiModule,
  ],
  controllers: [WellKnownController, DocsController, CompaniesController, PeopleController, McpController],
  providers: [
    RecordStore,
    Sql,
    CountCache,
    CompaniesService,
    PeopleService,
    BearerAuthService,
    WebhooksWorker,
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_FILTER, useClass: RestExceptionFilter },
  ],
  exports: [RecordStore, CompaniesService, PeopleService, BearerAuthService],
})
export class AppModule {}
