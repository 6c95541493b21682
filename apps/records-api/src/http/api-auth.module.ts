import { Module } from '@nestjs/common';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { CredentialCache } from '#auth/credential-cache.js';
import { RecordsModule } from '#records/service/records.module.js';
import { IdempotencyStore } from './idempotency.js';

/** The records API's bearer authentication (guard, GraphQL context, MCP) and its Idempotency-Key store. */
@Module({
  imports: [RecordsModule],
  providers: [CredentialCache, BearerAuthService, IdempotencyStore],
  exports: [CredentialCache, BearerAuthService, IdempotencyStore],
})
export class ApiAuthModule {}
