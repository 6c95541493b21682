import { Module } from '@nestjs/common';
import { WebSessions } from '../sessions/web-sessions.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { SettingsApiController } from './api-keys/api-keys.api.controller.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { ServerAppsController } from './apps/apps.controller.js';
import { AuditApiController, AuditController } from './audit/audit.controller.js';
import { ServerAppsService } from './apps/apps.service.js';
import { DataModelController, DataModelObjectsController } from './data-model/data-model.controller.js';
import { DataModelService } from './data-model/data-model.service.js';
import { ImportsModule } from '#records/imports/imports.module.js';
import { SettingsImportsController } from './imports/imports.controller.js';
import { SettingsAssetsController, SettingsHomeController, SettingsNotFoundController } from './home.controller.js';
import { InvitesController } from './members/invites.controller.js';
import { MembersController } from './members/members.controller.js';
import { MembersService } from './members/members.service.js';
import { OneTimeSecrets } from './one-time-secrets.js';
import { RolesController } from './roles/roles.controller.js';
import { RolesApiController } from './roles/roles.api.controller.js';
import { RolesService } from './roles/roles.service.js';
import { SettingsGuard } from './settings.guard.js';
import { WebhooksApiController } from './webhooks/webhooks.api.controller.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { WebhooksService } from './webhooks/webhooks.service.js';
import { VaultApiController } from './vault/vault.api.controller.js';
import { VaultController } from './vault/vault.controller.js';
import { VaultService } from './vault/vault.service.js';
import { SignInThrottle } from '../sessions/sign-in-throttle.js';
import { RecentPassword } from '../sessions/recent-password.js';

/** The workspace settings pages for signed-in members, and the JSON API they share a service layer with. */
@Module({
  // Imports and the records layer, on the records API's database (docs/settings.md).
  imports: [ImportsModule],
  controllers: [
    SettingsAssetsController,
    SettingsHomeController,
    ApiKeysController,
    SettingsApiController,
    ServerAppsController,
    WebhooksController,
    WebhooksApiController,
    VaultController,
    VaultApiController,
    // Before DataModelController: its `:id` routes would take /settings/data-model/objects.
    DataModelObjectsController,
    DataModelController,
    SettingsImportsController,
    RolesController,
    RolesApiController,
    MembersController,
    InvitesController,
    AuditController,
    AuditApiController,
    SettingsNotFoundController,
  ],
  providers: [
    WebSessions,
    SettingsGuard,
    OneTimeSecrets,
    ApiKeysService,
    ServerAppsService,
    RolesService,
    MembersService,
    WebhooksService,
    VaultService,
    SignInThrottle,
    RecentPassword,
    DataModelService,
  ],
})
export class SettingsModule {}
