import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { OBJECTS } from '#records/objects/index.js';
import { packageVersion } from './docs-pages.js';
import { objectList } from './field-tables.js';
import { addWebhooks } from './open-api-webhooks.js';

export const OPEN_API_PATH = '/rest/open-api';
export const API_REFERENCE_PATH = '/docs/api-reference';

/**
 * The OpenAPI 3.1 document of `/rest`, generated from the controllers' decorators and the
 * DTO classes (no Nest CLI plugin: we compile with plain tsc).
 */
export function buildOpenApiDocument(app: INestApplication, publicUrl: string): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Workspace Records Service REST API')
    .setDescription(
      `${objectList()} of one CRM workspace. Every call needs ` +
        '`Authorization: Bearer <token>`: an API key ' +
        "(`wrs_…`) or an OAuth 2.1 access token; the workspace is the credential's. Errors are " +
        '`{statusCode, error, code, messages, requestId}`. ' +
        `Guides: ${publicUrl}/llms.txt.`,
    )
    .setVersion(packageVersion())
    .addServer(publicUrl)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key (wrs_…) or an OAuth 2.1 access token.' }, 'bearer')
    .setExternalDoc('REST guide', `${publicUrl}/docs/rest`);
  for (const object of OBJECTS) builder.addTag(object.plural, object.docs.tag);
  builder.addTag('webhooks', 'Events POSTed to your endpoints (managed on /settings/webhooks), signed the Standard Webhooks way.');
  const config = builder.build();
  const document = SwaggerModule.createDocument(app, config);
  // Unknown body fields are refused (docs/rest.md): say so, so generated clients and validators agree.
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    if (name.endsWith('Input') && 'properties' in schema) schema.additionalProperties = false;
  }
  addWebhooks(document, publicUrl);
  return document;
}

/** JSON at /rest/open-api and Swagger UI (assets from swagger-ui-dist, served locally) at /docs/api-reference. Both public. */
export function serveOpenApi(app: INestApplication, publicUrl: string): OpenAPIObject {
  const document = buildOpenApiDocument(app, publicUrl);
  SwaggerModule.setup(API_REFERENCE_PATH, app, document, {
    jsonDocumentUrl: OPEN_API_PATH,
    raw: ['json'],
    customSiteTitle: 'API reference · Workspace Records Service',
    swaggerOptions: { defaultModelsExpandDepth: 0, tryItOutEnabled: false },
  });
  return document;
}
