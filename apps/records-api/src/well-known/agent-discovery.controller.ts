import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/**
 * What /mcp speaks: the stateless 2026-07-28 revision (the SDK's handler; its list of
 * modern revisions is not exported) and every revision the SDK negotiates by `initialize`.
 */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS] as const;
import { Public } from '#auth/auth.guard.js';
import { loadConfig } from '#config/config.js';
import { packageVersion } from './docs-pages.js';

/** RFC 9727 §4.1: the api-catalog linkset's media type, with the profile that names it. */
const LINKSET = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

/**
 * Discovery for agents and registries (docs/mcp.md), public and cacheable: an API catalog
 * (RFC 9727) naming each API with its description, docs and metadata, and an MCP server
 * card (SEP-2127) telling a client where /mcp is and how to authenticate before it connects.
 */
@Public()
@ApiExcludeController()
@Controller('.well-known')
export class AgentDiscoveryController {
  private readonly publicUrl = loadConfig().publicUrl;

  @Get('api-catalog')
  @Header('Content-Type', LINKSET)
  @Header('Cache-Control', 'public, max-age=3600')
  @Header('Link', '</.well-known/api-catalog>; rel="api-catalog"')
  catalog() {
    const url = this.publicUrl;
    const link = (href: string, type: string) => [{ href, type }];
    return {
      linkset: [
        {
          anchor: `${url}/rest`,
          'service-desc': link(`${url}/rest/open-api`, 'application/openapi+json'),
          'service-doc': link(`${url}/docs/rest`, 'text/html'),
          'service-meta': link(`${url}/.well-known/oauth-protected-resource`, 'application/json'),
        },
        {
          anchor: `${url}/graphql`,
          'service-doc': link(`${url}/docs/graphql`, 'text/html'),
          'service-meta': link(`${url}/.well-known/oauth-protected-resource`, 'application/json'),
        },
        {
          anchor: `${url}/mcp`,
          'service-desc': link(`${url}/.well-known/mcp/server-card.json`, 'application/json'),
          'service-doc': link(`${url}/docs/mcp`, 'text/html'),
          'service-meta': link(`${url}/.well-known/oauth-protected-resource/mcp`, 'application/json'),
        },
      ],
    };
  }

  @Get('mcp/server-card.json')
  @Header('Cache-Control', 'public, max-age=3600')
  serverCard() {
    const url = new URL(this.publicUrl);
    return {
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      // Reverse-DNS namespace of the host serving it, one slash, then the server's name.
      name: `${url.hostname.split('.').reverse().join('.')}/workspace-records`,
      version: packageVersion(),
      title: 'Workspace Records',
      description:
        "A CRM workspace's records (companies, people) as MCP tools: list with filters and keyset pages, get, create, update, delete — each bounded by the caller's role.",
      websiteUrl: `${this.publicUrl}/docs/mcp`,
      remotes: [
        {
          type: 'streamable-http',
          url: `${this.publicUrl}/mcp`,
          supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
          // OAuth 2.1 found from the 401's resource metadata (RFC 9728), or an API key as a Bearer header.
          authentication: { required: true, schemes: ['oauth2', 'bearer'] },
        },
      ],
      // Tools depend on the caller's role, so none are listed statically: tools/list tells each caller its own.
      capabilities: { tools: { listChanged: false } },
    };
  }
}
