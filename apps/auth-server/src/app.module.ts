import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { HealthModule } from '#ops/health.module.js';
import { RateLimitPool } from '#ops/rate-limits.js';
import { AccountPagesController } from './interactions/account-pages.controller.js';
import { InteractionsController } from './interactions/interactions.controller.js';
import { OIDC_PROVIDER } from './oidc/oidc.tokens.js';
import { createProvider } from './oidc/provider.js';
import { SettingsModule } from './settings/settings.module.js';
import { SignInThrottle } from './sessions/sign-in-throttle.js';
import { WebSessions } from './sessions/web-sessions.js';

/** The authorization server: oidc-provider, its Postgres storage, our sign-in pages and the workspace settings. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: async () => dataSourceOptions((await resolveDatabaseUrl()).url, 10),
    }),
    SettingsModule,
    HealthModule,
  ],
  controllers: [InteractionsController, AccountPagesController],
  providers: [
    WebSessions,
    SignInThrottle,
    RateLimitPool.provider(),
    {
      provide: OIDC_PROVIDER,
      inject: [DataSource],
      useFactory: async (ds: DataSource) => {
        await runMigrations(ds); // the keys table must exist before the provider reads it
        return createProvider(ds, loadConfig().publicUrl);
      },
    },
  ],
  exports: [OIDC_PROVIDER],
})
export class AuthServerModule {}
