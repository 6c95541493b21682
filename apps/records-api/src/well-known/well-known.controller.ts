import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '#auth/auth.guard.js';
import { RESOURCE_SCOPES } from '#auth/scopes.js';
import { loadConfig } from '#config/config.js';

/** RFC 9728 protected resource metadata: how a client finds our authorization server. */
function resourceMetadata(resource: string, publicUrl: string) {
  return {
    resource,
    authorization_servers: [publicUrl],
    // What a client may ask for (docs/authentication.md "Scopes"): `api`, or narrower ones, and `profile`.
    scopes_supported: [...RESOURCE_SCOPES, 'profile'],
    bearer_methods_supported: ['header'],
    resource_name: 'Workspace Records Service',
    resource_documentation: `${publicUrl}/llms.txt`,
  };
}

@Public()
@ApiExcludeController()
@Controller()
export class WellKnownController {
  private readonly publicUrl = loadConfig().publicUrl;

  @Get('.well-known/oauth-protected-resource')
  @Header('Cache-Control', 'public, max-age=3600')
  root() {
    return resourceMetadata(this.publicUrl, this.publicUrl);
  }

  @Get('.well-known/oauth-protected-resource/mcp')
  @Header('Cache-Control', 'public, max-age=3600')
  mcp() {
    return resourceMetadata(`${this.publicUrl}/mcp`, this.publicUrl);
  }
}
