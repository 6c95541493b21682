import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, resolveDatabaseUrl } from '../../../libs/database/src/data-source.js';
import { HealthController } from './health.controller.js';

/** The authorization server. OAuth 2.1 (oidc-provider), sign-in and settings pages come next. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: async () => dataSourceOptions((await resolveDatabaseUrl()).url, 10),
    }),
  ],
  controllers: [HealthController],
})
export class AuthServerModule {}
